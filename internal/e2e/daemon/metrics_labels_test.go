package daemon

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestMetricsMadeUpToolNames: a script that calls 300 tools the demo does
// not have, and 20 whose names are 100 KB long, adds one "other" tool's
// series to the daemon's metrics, not one per name; the page stays
// small, and a tool the demo lists keeps its own label.
func TestMetricsMadeUpToolNames(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	script := e.Path("names.js")
	code := `await tools.demo.echo({});
for (let i = 0; i < 300; i++) { try { await tools.demo["made_up_" + i]({}); } catch (e) {} }
for (let i = 0; i < 20; i++) { try { await mcpx.call("demo__" + i + "x".repeat(100000), {}); } catch (e) {} }
return "done";`
	if err := os.WriteFile(script, []byte(code), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := e.Run(2*time.Minute, "exec", "--config", cfg, "--quiet", script); code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("exec: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	status, page := harness.SocketGet(t, harness.DaemonStatus(t, e, cfg).Socket, apitype.PathMetrics)
	if status != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", status, page)
	}
	s := harness.ParseMetrics(t, page)
	tools := map[string]bool{}
	for _, m := range s["mcpx_calls_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "tool" {
				tools[l.GetValue()] = true
			}
		}
	}
	if len(tools) > 2 || !tools["echo"] {
		t.Errorf("tool labels %d (echo %v); want echo and other only", len(tools), tools["echo"])
	}
	if got := s.Value("mcpx_calls_total", "server=demo", "tool=other"); got < 300 {
		t.Errorf("calls counted as other: %v, want at least 300", got)
	}
	if len(page) > 256<<10 {
		t.Errorf("the metrics page is %d bytes", len(page))
	}
	checkPromtool(t, page)
}
