package surface

import (
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// askedHost starts a host, declaring form elicitation, of the asker
// fixture.
func askedHost(t *testing.T) (*mcpxtest.Env, *mcpxtest.Host) {
	e := mcpxtest.NewEnv(t)
	cfg := harness.WriteServers(t, e, nil, map[string]any{"asker": harness.FixtureServer("asker", nil)})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Request("initialize", map[string]any{"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
		"clientInfo":   map[string]any{"name": "asked", "version": "1"}})
	h.Result(jsonrpc.NewIntID(1), harness.WaitLong)
	h.Notify("notifications/initialized", nil)
	return e, h
}

// TestQuestionFlood: an upstream sends its host 3,000 elicitation
// requests during one call. The host gets at most the bound of questions
// at once (16); the upstream's request past it is refused with an error
// naming the bound, and the call fails with it.
func TestQuestionFlood(t *testing.T) {
	e, h := askedHost(t)
	call := h.Request("tools/call", map[string]any{"name": "asker__work", "arguments": map[string]any{"count": 3000}})
	resp := h.Response(call, harness.WaitLong)
	if resp.Error == nil || !strings.Contains(resp.Error.Message, "more than 16 questions") {
		t.Fatalf("the call: %s %v; want an error naming the bound of 16 questions at once", resp.Result, resp.Error)
	}
	asked := 0
	for _, r := range h.Received() {
		if r.Msg.IsRequest() && r.Msg.Method == "elicitation/create" {
			asked++
		}
	}
	t.Logf("the host was asked %d questions; the call: %s", asked, resp.Error.Message)
	if asked > 16 {
		t.Errorf("the host was asked %d questions at once, past the bound of 16", asked)
	}
	h.Close()
	e.StopDaemons()
	if logs := harness.DaemonLogs(e); !strings.Contains(logs, `asker: a question was refused: upstream \"asker\" asked the host more than 16 questions`) {
		t.Errorf("the upstream was not told the bound; daemon log:\n%s", logs)
	}
}

// TestQuestionsPerCall: an upstream asks its host one question after
// another, each answered, 1,200 in one call. The 1,001st is refused with
// an error naming the bound of questions per call, and the call fails
// with it.
func TestQuestionsPerCall(t *testing.T) {
	e, h := askedHost(t)
	call := h.Request("tools/call", map[string]any{"name": "asker__work", "arguments": map[string]any{"count": 1200, "serial": true}})
	answered := map[string]bool{}
	var resp *jsonrpc.Message
	for resp == nil {
		r := h.WaitFor(harness.WaitLong, "a question or the call's end", func(r mcpxtest.Received) bool {
			return r.Msg.IsResponse() && r.Msg.ID == call ||
				r.Msg.IsRequest() && r.Msg.Method == "elicitation/create" && !answered[r.Msg.ID.String()]
		})
		if r.Msg.IsResponse() {
			resp = r.Msg
			break
		}
		answered[r.Msg.ID.String()] = true
		h.Send(map[string]any{"jsonrpc": "2.0", "id": r.Msg.ID.Raw(), "result": map[string]any{"action": "accept", "content": map[string]any{}}})
	}
	t.Logf("the host answered %d questions; the call: %v", len(answered), resp.Error)
	if resp.Error == nil || !strings.Contains(resp.Error.Message, "more than 1000 questions") {
		t.Fatalf("the call: %s %v; want an error naming the bound of 1000 questions per call", resp.Result, resp.Error)
	}
	if len(answered) != 1000 {
		t.Errorf("the host was asked %d questions, want the bound, 1000", len(answered))
	}
	h.Close()
	e.StopDaemons()
	if logs := harness.DaemonLogs(e); !strings.Contains(logs, `asker: a question was refused: upstream \"asker\" asked the host more than 1000 questions`) {
		t.Errorf("the upstream was not told the bound")
	}
}
