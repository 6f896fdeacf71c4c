package surface

import (
	"regexp"
	"strings"
	"testing"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// sealedState matches a requestState mcpx sealed: random each run.
var sealedState = regexp.MustCompile(`"requestState":"mcpx1\.[A-Za-z0-9_-]+"`)

// askModern sends a 2026-07-28 tools/call of the demo's ask tool with
// extra params members, and returns the response.
func askModern(h *mcpxtest.Host, id, asks, extra string) *jsonrpc.Message {
	h.SendRaw(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"demo__ask","arguments":{"asks":[` + asks + `]},` + harness.ModernAskMeta + extra + `}}`)
	return h.Response(jsonrpc.NewStringID(id), harness.TranscriptWait)
}

// TestTranscriptModernHostLegacyUpstream: a 2026-07-28 host that declared
// elicitation calls the demo's ask tool on a legacy upstream. mcpx holds
// the upstream call and answers the host input_required, under its own
// key (mcpx-1) and a sealed requestState (normalised in the golden as
// SEALED); the host's retry, with a new id, resumes the held call: the
// upstream gets the host's answer under its own id ("ask-1") and the host
// the result. One upstream tools/call in all.
func TestTranscriptModernHostLegacyUpstream(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, harness.LegacyDemo))
		keys, state := harness.InputRequiredOf(t, askModern(h, "c1", harness.AskForm, ""))
		if len(keys) != 1 || keys[0] != "mcpx-1" {
			t.Fatalf("input request keys %v", keys)
		}
		m := askModern(h, "c2", harness.AskForm, `,"inputResponses":{"mcpx-1":{"action":"accept","content":{"name":"Ada"}}},"requestState":"`+state+`"`)
		res := m.Result
		if !strings.Contains(string(res), `"answers":[{"result":{"action":"accept","content":{"name":"Ada"}}}]`) {
			t.Errorf("result %s", res)
		}
		norm := func(lines []string) []string {
			for i, l := range lines {
				lines[i] = sealedState.ReplaceAllString(normalizeLine(l), `"requestState":"SEALED"`)
			}
			return lines
		}
		tr := &mcpxtest.Transcript{Header: `A 2026-07-28 host that declared elicitation (form) calls the demo's ask
tool on a legacy upstream (demo -era legacy), which sends elicitation/create
during the call.

mcpx holds the upstream call and answers the host input_required: the
question under a key of mcpx's (mcpx-1) and a requestState mcpx sealed
(AES-GCM; bound to this host, the server, tool and arguments, and an
expiry; SEALED here, as it differs each run). The host's retry (new id,
inputResponses, the state) resumes the held call: the upstream gets the
host's answer under its own id, and the host the result. The upstream
sees one tools/call.`, Streams: []mcpxtest.Stream{
			{Name: streamHostToMcpx, Lines: norm(h.Sent())},
			{Name: streamMcpxToHost, Lines: norm(h.ReceivedLines())},
			{Name: streamUpstream, Lines: norm(e.WireLog("demo"))},
		}}
		mcpxtest.CheckGolden(t, goldenPath("ask-modern-host-legacy-upstream"), tr.Format(), *updateGoldens)
	})
}

// TestSealedStateRefused: a retry whose requestState has a flipped byte,
// has expired, or was issued to another host is refused with -32602, and
// a held call whose host never retries is cancelled upstream after
// mcpx.inputTimeout with that reason.
func TestSealedStateRefused(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"inputTimeout": "1s"}, harness.LegacyDemo)
		h := e.StartHost(mode, cfg)
		answer := `,"inputResponses":{"mcpx-1":{"action":"decline"}},"requestState":"`

		// A flipped byte.
		_, state := harness.InputRequiredOf(t, askModern(h, "t1", harness.AskForm, ""))
		b := []byte(state)
		i := len(statePrefixForTest) + 10
		b[i] ^= 1
		if b[i] == '"' || b[i] == '\\' {
			b[i] ^= 3
		}
		m := askModern(h, "t2", harness.AskForm, answer+string(b)+`"`)
		if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "altered") {
			t.Errorf("a tampered state: %s, want -32602", m.Encode())
		}
		// Different arguments with a good state.
		m = askModern(h, "t3", harness.AskForm+`,{"method":"roots/list"}`, answer+state+`"`)
		if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "different request") {
			t.Errorf("a state for other arguments: %s, want -32602", m.Encode())
		}
		// The host never retries: after 1 s the upstream call is cancelled,
		// with the reason; the state has expired.
		ev := e.WaitRecord("demo", harness.TranscriptWait, func(ev demo.Event) bool { return ev.Event == demo.EventCancelled })
		if !strings.Contains(ev.Reason, "the host did not retry within 1s of mcpx's input_required") {
			t.Errorf("upstream cancellation reason %q", ev.Reason)
		}
		m = askModern(h, "t4", harness.AskForm, answer+state+`"`)
		if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "expired") {
			t.Errorf("an expired state: %s, want -32602", m.Encode())
		}
		if mode != mcpxtest.Daemon {
			return // another host of the same gateway: a second mcpx serve
		}
		// The other host starts first: a state lives 1 s, and a second
		// mcpx serve can take longer than that to start on a loaded machine.
		other := e.StartHost(mode, cfg)
		other.SendRaw(`{"jsonrpc":"2.0","id":"p0","method":"ping"}`)
		other.Response(jsonrpc.NewStringID("p0"), harness.TranscriptWait) // its serve is up
		_, state = harness.InputRequiredOf(t, askModern(h, "t5", harness.AskForm, ""))
		m = askModern(other, "t6", harness.AskForm, answer+state+`"`)
		if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "another host") {
			t.Errorf("another host's state: %s, want -32602", m.Encode())
		}
	})
}

const statePrefixForTest = "mcpx1."

// TestModernHostUndeclaredCapability: a 2026-07-28 host that declared
// elicitation (form only) is never sent an inputRequests for what it did
// not declare: a legacy upstream's sampling request and URL elicitation
// are refused upstream (-32601) by mcpx, and the host gets the upstream's
// final result, not input_required.
func TestModernHostUndeclaredCapability(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, harness.LegacyDemo))
		m := askModern(h, "u1", harness.AskSamp+`,`+harness.AskURL, "")
		if m.Error != nil || strings.Contains(string(m.Result), "input_required") ||
			strings.Count(string(m.Result), `\"code\":-32601`) != 2 {
			t.Fatalf("want a complete result holding two refusals, got %s", m.Encode())
		}
		for _, l := range e.WireLog("demo") {
			if strings.HasPrefix(l, "< ") && strings.Contains(l, `"id":"ask-`) && !strings.Contains(l, `"code":-32601`) {
				t.Errorf("mcpx answered the upstream's question with something else than -32601: %s", l)
			}
		}
	})
}
