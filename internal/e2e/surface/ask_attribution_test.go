package surface

import (
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// TestAskStdioTwoHosts: one daemon, one legacy stdio upstream shared by
// two hosts that both declared elicitation. On stdio an upstream's
// elicitation/create names no call; while calls of both hosts are in
// flight mcpx cannot tell whose it is, so the upstream is refused and
// neither host is asked (a question, or a host's roots, must never reach
// the wrong host). With one host's calls in flight alone, its host is
// asked as before.
func TestAskStdioTwoHosts(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, harness.LegacyDemo)
	a, b := e.StartHost(mcpxtest.Daemon, cfg), e.StartHost(mcpxtest.Daemon, cfg)
	harness.AskHost(a, `{"elicitation":{}}`)
	harness.AskHost(b, `{"elicitation":{}}`)

	a.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__wait","arguments":{"seconds":60}}}`)
	waitWire(t, e, "demo", `"name":"wait"`)
	b.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__ask","arguments":{"asks":[` + harness.AskForm + `]}}}`)
	res := string(b.Result(jsonrpc.NewIntID(2), harness.TranscriptWait))
	if !strings.Contains(res, "cannot tell which tool call") {
		t.Errorf("b's ask while a's call is in flight = %s, want the upstream refused for ambiguity", res)
	}
	for name, h := range map[string]*mcpxtest.Host{"a": a, "b": b} {
		for _, r := range h.Received() {
			if r.Msg.IsRequest() {
				t.Errorf("host %s was asked %s while the question's host was ambiguous", name, r.Raw)
			}
		}
	}

	a.SendRaw(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"done waiting"}}`)
	waitWire(t, e, "demo", `"method":"notifications/cancelled"`)
	b.SendRaw(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"demo__ask","arguments":{"asks":[` + harness.AskForm + `]}}}`)
	q := harness.Question(b, "elicitation/create")
	b.SendRaw(`{"jsonrpc":"2.0","id":` + q.ID.String() + `,"result":{"action":"accept","content":{"name":"Bea"}}}`)
	if res := string(b.Result(jsonrpc.NewIntID(3), harness.TranscriptWait)); !strings.Contains(res, "Bea") {
		t.Errorf("b's ask alone = %s, want its answer", res)
	}
	for _, r := range a.Received() {
		if r.Msg.IsRequest() {
			t.Errorf("host a was asked %s, a question of b's call", r.Raw)
		}
	}
}
