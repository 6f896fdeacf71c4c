package jobs

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestJobsForPeople: jobs wait prints a job's result as call does (text,
// not JSON), a script's as a script's with the string it returned
// unquoted, and no carriage-return progress when piped; after mcpx stop,
// jobs and jobs show still read the kept results (starting a daemon as
// call does).
func TestJobsForPeople(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	run := harness.CliRun(t, e, cfg)
	tool := strings.TrimSpace(run(0, "call", "--background", "--quiet", "demo.export", `{"seconds": 1, "steps": 4}`))
	out, errb, code := e.Run(harness.RelayWait, "jobs", "wait", tool, "--config", cfg)
	if code != 0 || out != "exported 1000 records in 4 parts\n" || strings.Contains(errb, "\r") {
		t.Errorf("jobs wait of a tool's job: exit %d, stdout %q, stderr %q; want 0, the text, no \\r", code, out, errb)
	}
	script := e.Path("warmest.js")
	if err := os.WriteFile(script, []byte(`return "Los Angeles";`), 0o600); err != nil {
		t.Fatal(err)
	}
	sid := strings.TrimSpace(run(0, "exec", "--background", script))
	if out := run(0, "jobs", "wait", sid); out != "Los Angeles\n" {
		t.Errorf("jobs wait of a script's job printed %q, want Los Angeles unquoted", out)
	}
	if out, _, code := e.Run(harness.RelayWait, "exec", script, "--config", cfg); code != 0 || out != "Los Angeles\n" {
		t.Errorf("exec printed %q (exit %d), want Los Angeles unquoted", out, code)
	}

	// A job's call counts among its server's calls in flight, as the
	// metrics count it.
	long := strings.TrimSpace(run(0, "call", "--background", "demo.wait", `{"seconds": 60}`))
	for deadline := time.Now().Add(harness.RelayWait); ; time.Sleep(50 * time.Millisecond) {
		var st apitype.Status
		if err := json.Unmarshal([]byte(run(0, "status", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Upstreams) == 1 && st.Upstreams[0].InFlight == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never counted the running job's call in flight: %+v", st.Upstreams)
		}
	}
	run(0, "jobs", "cancel", long)

	run(0, "stop")
	list := run(0, "jobs")
	if !strings.Contains(list, tool) || !hasCells(list, sid, "completed", "script") || !hasCells(list, tool, "completed", "demo.export") {
		t.Errorf("jobs after stop:\n%s\nwant both jobs, the script's as a script", list)
	}
	if show := run(0, "jobs", "show", tool); !strings.Contains(show, "result:\nexported 1000 records in 4 parts\n") {
		t.Errorf("jobs show after stop:\n%s", show)
	}
}

// hasCells reports whether a line of out has the given first cells.
func hasCells(out string, cells ...string) bool {
	for l := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= len(cells) && strings.Join(f[:len(cells)], " ") == strings.Join(cells, " ") {
			return true
		}
	}
	return false
}
