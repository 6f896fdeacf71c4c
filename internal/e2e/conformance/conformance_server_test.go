package conformance

import (
	"encoding/json"
	"os"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// conformanceServerSuites are the suites every server scenario is graded
// in: 0.1.16, the alpha at 2025-11-25 and at 2026-07-28 (--suite all),
// and the alpha's frozen requirement set of 2026-07-28 (extension and
// pending scenarios too).
var conformanceServerSuites = []mcpxtest.ConformanceSuite{
	mcpxtest.Conformance0116, mcpxtest.ConformanceAlpha2025, mcpxtest.ConformanceAlpha2026, mcpxtest.ConformanceAlphaRequirements2026,
}

// TestConformanceServer grades the conformance suite's server scenarios,
// each suite in one CLI run, twice: directly against the conformance
// fixture (internal/conformfixture, served over Streamable HTTP in this
// process: the reference), then against mcpx's Streamable HTTP face
// (--token none: the suite sends none) with the fixture as its only
// upstream (a stdio child, its names unprefixed). Each run is judged by
// the suite against its expected-failures file (fixture-*.yml, and
// baseline-*.yml for mcpx, in test/interop/conformance): a failure not
// listed, or a listed one that passes, fails the test. The table of both
// runs, scenario by scenario, is logged; a scenario that passes directly
// but fails through mcpx is marked "!".
//
// mcpx runs in this process (daemon.ServeHTTP) for every suite and, for
// the 2026-07-28 one, also spawned as `mcpx serve --http 127.0.0.1:0
// --token none`, which must serve it alike, and once more with the fixture
// as a Streamable HTTP upstream (mcpx's HTTP client, 2026-07-28 to the
// fixture) instead of a stdio child.
func TestConformanceServer(t *testing.T) {
	t.Parallel()
	for _, s := range conformanceServerSuites {
		s.CLI(t) // fail at once, not per suite, if not installed
	}
	for _, s := range conformanceServerSuites {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			direct := mcpxtest.RunConformanceServer(t, s, s.FixtureBaseline, serveConformanceFixture(t))
			directOK := direct.Judge(t)
			fronts := []conformanceFront{{mcpxtest.InProcess, false}}
			if s == mcpxtest.ConformanceAlpha2026 {
				fronts = append(fronts, conformanceFront{mcpxtest.Daemon, false}, conformanceFront{mcpxtest.InProcess, true})
			}
			for _, f := range fronts {
				e := mcpxtest.NewEnv(t)
				upstream := harness.FixtureServer(harness.ConformanceFixtureName, nil)
				if f.http {
					upstream = map[string]any{"type": "http", "url": serveConformanceFixture(t)}
				}
				m := harness.StartHTTP(t, e, f.mode, writeConformanceConfig(t, e, upstream), true)
				via := mcpxtest.RunConformanceServer(t, s, s.Baseline, m.URL)
				if !via.Judge(t) || !directOK {
					t.Logf("mcpx's log (%s):\n%s", f, m.Logs())
				}
				t.Logf("%s, mcpx %s:\n%s", s.Name, f, mcpxtest.CompareConformance(direct, via))
			}
		})
	}
}

// conformanceFront is how mcpx fronts the fixture: its run mode, and
// whether the fixture is an HTTP upstream rather than a stdio child.
type conformanceFront struct {
	mode mcpxtest.Mode
	http bool
}

func (f conformanceFront) String() string {
	if f.http {
		return string(f.mode) + ", fixture over HTTP"
	}
	return string(f.mode) + ", fixture on stdio"
}

// writeConformanceConfig writes a config whose only upstream is the
// conformance fixture (server, a config entry), its names unprefixed.
func writeConformanceConfig(t *testing.T, e *mcpxtest.Env, server map[string]any) string {
	doc := map[string]any{
		"mcpServers": map[string]any{"fixture": server},
		// The tasks extension's scenarios: mcpx makes the fixture's plain
		// tools tasks, one still running after 200 ms; two of them only
		// as tasks, and greet never.
		"mcpx": map[string]any{"toolNames": map[string]any{"prefix": "auto"}, "jobs": map[string]any{"taskAfter": "200ms"}},
	}
	server["taskTools"] = map[string]any{"failing_job": "required", "test_tool_with_task": "required", "greet": "forbidden"}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := e.Path("config.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
