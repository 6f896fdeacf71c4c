package hostile

import (
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestHTTPSessionsBounded: abandoned legacy sessions are bounded
// (mcpx.http.maxSessions): past the bound, a new session ends the one
// unused for the longest, which then answers 404 as an ended session
// does; the others still serve.
func TestHTTPSessionsBounded(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"http": map[string]any{"maxSessions": 3}}, mcpxtest.Demo{Name: "demo"})
		m := harness.StartHTTP(t, e, mode, cfg, false)
		var hosts []*harness.RawHost
		for range 5 {
			h := harness.NewRawHost(t, m)
			h.Initialize("2025-11-25")
			hosts = append(hosts, h)
		}
		for i, h := range hosts {
			r := h.Do(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
			want := 200
			if i < 2 {
				want = 404 // ended to make room
			}
			if r.Status != want {
				t.Errorf("session %d of 5 (bound 3): ping %d %s, want %d", i+1, r.Status, r.Body, want)
			}
		}
	})
}
