package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// mcpx's upstream client graded by the conformance suite's client
// scenarios. `conformance client --command CMD` starts a scenario server
// and runs `CMD <url>`; it grades what reaches that server. CMD is this
// test binary, re-executed as a small host (conformanceHostEnv): it
// configures mcpx with the scenario server as its only upstream (type
// http, its era probed as always), runs mcpx in its own process (the
// gateway in-process, daemon.ServeStdio on a pipe: the real upstream
// client, under the race detector when the tests have it), and drives it
// as a host would, over the stdio face: it lists the tools and calls the
// ones the scenario expects a client to call, with the scenario's
// arguments (at 2026-07-28 answering input_required and retrying, as a
// client of that revision does: mcpx relays both rounds). The host is Go, built from this repo with the tests, so it
// needs no npm package of its own and adds no Node client in between whose
// behaviour the scenario could end up grading instead of mcpx's.

// conformanceClientScenarios are every non-auth client scenario of each
// suite (`conformance list`): those of the legacy revisions, and those of
// 2026-07-28 (initialize, sse-retry and elicitation-sep1034-client-defaults
// were removed there). Left out: auth/* (mcpx's upstream client does no
// OAuth yet) and the skills extension's sep-2640-* (they grade a host
// that loads skills, which mcpx is not).
var conformanceClientScenarios = []struct {
	suite     mcpxtest.ConformanceSuite
	scenarios []string
}{
	{mcpxtest.Conformance0116, []string{"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"}},
	{mcpxtest.ConformanceAlpha2025, []string{"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry",
		"json-schema-2020-12-preservation"}},
	{mcpxtest.ConformanceAlpha2026, []string{"tools_call", "request-metadata", "sep-2322-client-request-state", "http-standard-headers",
		"http-custom-headers", "http-invalid-tool-headers", "json-schema-ref-no-deref", "json-schema-2020-12-preservation"}},
}

// TestConformanceClient runs each client scenario once per suite, each
// CLI run one scenario (--suite would run every auth scenario beside it,
// in parallel, which makes sse-retry's timing flaky); independent runs go
// in parallel. A run passes when the suite's verdict against its
// expected-failures file passes and the host did all it meant to.
func TestConformanceClient(t *testing.T) {
	t.Parallel()
	for _, s := range conformanceClientScenarios {
		s.suite.CLI(t)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The CLI splits the command at spaces and runs it through a shell.
	if strings.ContainsAny(exe, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
		t.Fatalf("the test binary's path %q cannot be passed in a conformance --command: set GOTMPDIR to a plain path", exe)
	}
	for _, s := range conformanceClientScenarios {
		t.Run(s.suite.Name, func(t *testing.T) {
			t.Parallel()
			for _, sc := range s.scenarios {
				t.Run(sc, func(t *testing.T) {
					t.Parallel()
					runConformanceClient(t, s.suite, sc, exe)
				})
			}
		})
	}
}

func runConformanceClient(t *testing.T, suite mcpxtest.ConformanceSuite, scenario, exe string) {
	dir := t.TempDir()
	spec, err := json.Marshal(harness.ConformanceHostSpec{Dir: dir, Report: filepath.Join(dir, "report.json")})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{harness.ConformanceHostEnv + "=" + string(spec), "GORACE=" + mcpxtest.RaceQuickExit}
	// -test.run matches nothing: should the variable not reach the host,
	// the binary runs no test rather than all of them.
	r := mcpxtest.RunConformance(t, suite, "client", scenario, env, "--command", exe+" -test.run=NONE")
	passed := r.Judge(t)

	var rep harness.ConformanceHostReport
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	switch {
	case err != nil:
		t.Errorf("the host wrote no report (%v)", err)
		passed = false
	case json.Unmarshal(b, &rep) != nil:
		t.Errorf("the host's report is not JSON: %s", b)
		passed = false
	case rep.Error != "":
		t.Errorf("the host failed: %s\nreport: %s", rep.Error, b)
		passed = false
	default:
		t.Logf("host (%s era, %.0f ms): tools %v", rep.Era, rep.ElapsedMs, rep.Tools)
		for _, c := range rep.Calls {
			if c.Gap != "" {
				t.Logf("  call %s: %s (may fail: %s)", c.Tool, c.Outcome(), c.Gap)
			} else {
				t.Logf("  call %s: %s", c.Tool, c.Outcome())
			}
		}
	}
	if strings.Contains(r.ClientStderr, "WARNING: DATA RACE") {
		t.Errorf("the race detector found a race in mcpx (the host's process)")
		passed = false
	}
	if !passed {
		t.Logf("the host's stderr (mcpx's log):\n%s", r.ClientStderr)
	}
}
