package e2e

import (
	"testing"

	"mcpx/internal/mcpxtest"
)

// conformanceServerScenarios are the server scenarios of the official
// conformance suite that mean something against a gateway whose upstream
// is mcpx's demo (they need no fixture tools), per suite: the HTTP face in
// every revision it serves. server-initialize and ping were removed in
// 2026-07-28 (the alpha skips them there); server-stateless and
// http-header-validation exist only there.
var conformanceServerScenarios = []struct {
	suite     mcpxtest.ConformanceSuite
	scenarios []string
}{
	{mcpxtest.Conformance0116, []string{"server-initialize", "ping", "tools-list", "server-sse-multiple-streams", "dns-rebinding-protection"}},
	{mcpxtest.ConformanceAlpha2025, []string{"server-initialize", "ping", "tools-list", "server-sse-multiple-streams", "dns-rebinding-protection"}},
	{mcpxtest.ConformanceAlpha2026, []string{"tools-list", "server-sse-multiple-streams", "dns-rebinding-protection", "server-stateless", "http-header-validation"}},
}

// TestConformanceServer grades mcpx's Streamable HTTP face with the
// conformance suite's server scenarios: `conformance server --url` against
// mcpx serving HTTP without a token (--token none: the suite sends none)
// with the demo as its upstream, in this process (daemon.ServeHTTP on a
// loopback listener) and, for the newest wire, as `mcpx serve --http
// 127.0.0.1:0 --token none` spawned. Each scenario is one CLI run, judged
// by the suite against the suite's expected-failures file
// (test/interop/conformance); the scenarios of a run mode share one mcpx
// and run in parallel.
func TestConformanceServer(t *testing.T) {
	t.Parallel()
	for _, s := range conformanceServerScenarios {
		s.suite.CLI(t) // fail at once, not per scenario, if not installed
	}
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		m := startHTTP(t, e, mode, cfg, true)
		for _, s := range conformanceServerScenarios {
			// The spawned binary serves the same handler: one suite,
			// the newest wire, shows that it serves it as the suite
			// expects (flags, --token none, the printed URL).
			if mode == mcpxtest.Daemon && s.suite != mcpxtest.ConformanceAlpha2026 {
				continue
			}
			t.Run(s.suite.Name, func(t *testing.T) {
				t.Parallel()
				for _, sc := range s.scenarios {
					t.Run(sc, func(t *testing.T) {
						t.Parallel()
						r := mcpxtest.RunConformance(t, s.suite, "server", sc, nil, "--url", m.URL)
						if !r.Judge(t) {
							t.Logf("mcpx's log so far:\n%s", m.Logs())
						}
					})
				}
			})
		}
	})
}
