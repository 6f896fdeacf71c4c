package surface

import (
	"encoding/json"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestURLElicitationTSHosts: URL-mode elicitation from a legacy upstream
// (the demo) to TypeScript SDK hosts through mcpx. A v1 host (legacy,
// stdio and HTTP) that declared URL mode is asked elicitation/create in
// url mode, with the upstream's url and elicitationId, under mcpx's id,
// and its accept reaches the upstream (the ask tool's result shows it). A
// v2 host (2026-07-28, HTTP) calls the gated tool, which answers -32042
// until the user has been to its URL: mcpx answers the host input_required
// with the URL elicitation (no elicitationId: 2026-07-28 has none) and a
// sealed requestState, the SDK answers from its handler and retries, and
// the call's result comes back.
func TestURLElicitationTSHosts(t *testing.T) {
	t.Parallel()
	node, interop := mcpxtest.Node(t)
	// (askhost.mjs installs all three handlers, which the SDK allows only
	// for declared capabilities: sampling and roots are declared, not used.)
	caps := map[string]any{"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}}, "sampling": map[string]any{}, "roots": map[string]any{}}
	for _, c := range []struct{ sdk, transport string }{{"v1", "stdio"}, {"v1", "http"}, {"v2", "http"}} {
		t.Run(c.sdk+"-"+c.transport, func(t *testing.T) {
			t.Parallel()
			if c.sdk == "v2" {
				mcpxtest.NodeModule(t, "@modelcontextprotocol/client", "package.json")
			}
			mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
				e := mcpxtest.NewEnv(t)
				cfg := e.WriteConfig(nil, harness.LegacyDemo)
				call := map[string]any{"name": "demo__ask", "arguments": json.RawMessage(`{"asks":[` + harness.AskURL + `]}`)}
				if c.sdk == "v2" {
					call = map[string]any{"name": "demo__gated", "arguments": map[string]any{"gate": "ts"}}
				}
				spec := map[string]any{
					"sdk": c.sdk, "transport": c.transport, "capabilities": caps,
					"elicit": map[string]any{"action": "accept"}, "calls": []any{call}, "deadlineMs": 60000,
				}
				harness.ReachMcpx(t, e, mode, c.transport, cfg, spec)
				r := runAskHost(t, node, interop, e, spec)
				if len(r.Results) != 1 || r.Results[0].Error != "" {
					t.Fatalf("results %+v, want the call's result", r.Results)
				}
				res := string(r.Results[0].Result)
				if c.sdk == "v1" {
					if len(r.Asked) != 1 || r.Asked[0].Method != "elicitation/create" {
						t.Fatalf("asked %+v, want one elicitation/create", r.Asked)
					}
					p := string(r.Asked[0].Params)
					for _, w := range []string{`"mode":"url"`, `"url":"https://example.test/login"`, `"elicitationId":"el-7"`} {
						if !strings.Contains(p, w) {
							t.Errorf("the host was asked %s, want %s in it", p, w)
						}
					}
					if !strings.Contains(res, `accept`) {
						t.Errorf("the ask tool's result %s does not show the host's accept", res)
					}
					waitWire(t, e, "demo", `"result":{"action":"accept"}`)
					return
				}
				if len(r.Asked) != 0 {
					t.Errorf("a 2026-07-28 host was sent requests: %+v", r.Asked)
				}
				if len(r.InputRequired) != 1 || len(r.Retries) != 1 || !strings.HasPrefix(r.InputRequired[0].RequestState, "mcpx1.") {
					t.Fatalf("input_required %+v, retries %q: want one, with mcpx's sealed state, and one retry", r.InputRequired, r.Retries)
				}
				if n := len(wireWith(e, "demo", `"method":"tools/call"`)); n != 2 {
					t.Errorf("the demo saw %d tools/call, want 2 (refused with -32042, then called again)", n)
				}
				if !strings.Contains(res, `"refused":1`) {
					t.Errorf("the gated tool's result %s, want it refused once", res)
				}
			})
		})
	}
}
