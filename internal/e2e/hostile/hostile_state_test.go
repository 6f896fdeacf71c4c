package hostile

import (
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// TestUpstreamStateBoundToHost: the requestState a 2026-07-28 upstream
// hands out (the demo's ask tool, a round per question) reaches its host
// sealed by mcpx, bound to that host: another token's host presenting it
// is refused (-32602), and so is the upstream's own state presented
// unsealed; its own host resumes the round, and the upstream gets its
// state back byte for byte.
func TestUpstreamStateBoundToHost(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo", Args: []string{"-era", "modern"}})
		out, stderr, code := e.Run(30*time.Second, "token", "--name", "alice")
		tokA := strings.TrimSpace(out)
		if code != 0 {
			t.Fatalf("mcpx token --name alice: exit %d %s", code, stderr)
		}
		m := harness.StartHTTP(t, e, mode, cfg, false)
		alice := harness.NewRawHost(t, &harness.HTTPMCPX{URL: m.URL, Token: tokA, LogBuf: m.LogBuf})
		other := harness.NewRawHost(t, &harness.HTTPMCPX{URL: m.URL, Token: m.Token, LogBuf: m.LogBuf})
		ask := func(h *harness.RawHost, id, extra string) *jsonrpc.Message {
			return harness.AskOverHTTP(t, h, id, extra)
		}
		keys, state := harness.InputRequiredOf(t, ask(alice, "a1", ""))
		if len(keys) != 1 || !strings.HasPrefix(state, "mcpx1.") {
			t.Fatalf("input_required keys %v, state %q; want one question and a state mcpx sealed", keys, state)
		}
		retry := func(state string) string {
			return `,"inputResponses":{"` + keys[0] + `":{"action":"accept","content":{"name":"Ada"}}},"requestState":"` + state + `"`
		}
		if m := ask(other, "b1", retry(state)); m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "another host") {
			t.Errorf("another host presenting alice's state: %s, want -32602", m.Encode())
		}
		if m := ask(alice, "a2", retry("W10")); m.Error == nil || m.Error.Code != -32602 {
			t.Errorf("the upstream's own state, unsealed: %s, want -32602", m.Encode())
		}
		m2 := ask(alice, "a3", retry(state))
		if m2.Error != nil || !strings.Contains(string(m2.Result), `"name":"Ada"`) || !strings.Contains(string(m2.Result), `"lastRequestState":"W10"`) {
			t.Errorf("alice resuming her round: %s, want her answer and the upstream's state back", m2.Encode())
		}
	})
}
