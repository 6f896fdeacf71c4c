package http

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestHTTPFaceParamHeaders: mcpx's HTTP face checks a 2026-07-28 host's
// Mcp-Param-* headers against the arguments of the tool it calls, by the
// tool's x-mcp-header annotations (SEP-2243), for a server-prefixed name
// (found from that one server's tools) and, with toolNames.prefix auto,
// a bare one (found in the whole catalog). A matching header passes and
// the upstream gets it again from mcpx; a missing or different one is
// -32020 with HTTP 400, and the upstream sees no call.
func TestHTTPFaceParamHeaders(t *testing.T) {
	for _, prefix := range []string{"always", "auto"} {
		t.Run(prefix, func(t *testing.T) {
			mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
				url, _, _ := harness.StartDemoHTTP(t)
				e := mcpxtest.NewEnv(t)
				doc, err := json.Marshal(map[string]any{
					"mcpServers": map[string]any{"demo": map[string]any{"type": "http", "url": url}},
					"mcpx":       map[string]any{"toolNames": map[string]any{"prefix": prefix}},
				})
				if err != nil {
					t.Fatal(err)
				}
				cfg := e.Path("config.json")
				if err := os.WriteFile(cfg, doc, 0o600); err != nil {
					t.Fatal(err)
				}
				m := harness.StartHTTP(t, e, mode, cfg, false)
				h := harness.NewRawHost(t, m)
				name := "demo__region_echo"
				if prefix == "auto" {
					name = "region_echo"
				}
				call := func(id int, region string) *harness.HttpReply {
					hdr := harness.ModernHeaders("tools/call", name)
					if region != "" {
						hdr["Mcp-Param-Region"] = region
					}
					return h.Do(harness.CallBody(id, name, map[string]any{"region": "eu-west"}, harness.ModernMeta(nil)), hdr)
				}
				if r := call(1, "eu-west"); r.Status != http.StatusOK || len(r.Msgs) == 0 || r.Msgs[len(r.Msgs)-1].Error != nil || !strings.Contains(string(r.Body), "eu-west") {
					t.Fatalf("a matching header: %d %.300s", r.Status, r.Body)
				}
				for _, c := range []struct{ region, words string }{{"", "missing"}, {"us-east", "does not match"}} {
					r := call(2, c.region)
					if r.Status != http.StatusBadRequest || len(r.Msgs) != 1 || r.Msgs[0].Error == nil || r.Msgs[0].Error.Code != -32020 || !strings.Contains(r.Msgs[0].Error.Message, c.words) {
						t.Errorf("header %q: %d %.300s, want 400 with -32020 (%s)", c.region, r.Status, r.Body, c.words)
					}
				}
			})
		})
	}
}
