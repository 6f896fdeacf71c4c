package jobs

import (
	"encoding/json"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestJobCLI: mcpx call --background prints a job id, the same call again
// gets the same job, mcpx jobs wait returns its result, mcpx jobs cancel
// ends another at its server; bad ids and verbs get clear errors.
func TestJobCLI(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	run := harness.CliRun(t, e, cfg)
	jobID := func(out string) string {
		var v struct {
			JobID string `json:"job_id"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil || !strings.HasPrefix(v.JobID, "job_") {
			t.Fatalf("not a job id: %q", out)
		}
		return v.JobID
	}
	// Long enough that the second call comes while the first runs, on a
	// loaded machine too: once it has ended, the same call is a new job.
	args := `{"seconds": 5, "text": "from the cli"}`
	id := jobID(run(0, "call", "--background", "--json", "demo.sleep_then", args))
	if again := jobID(run(0, "call", "--background", "--json", "demo.sleep_then", args)); again != id {
		t.Fatalf("the same call again started job %s, not %s", again, id)
	}
	var j struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(run(0, "jobs", "wait", id, "--json")), &j); err != nil || j.Status != "completed" || !strings.Contains(string(j.Result), "from the cli") {
		t.Fatalf("mcpx jobs wait: %+v %v", j, err)
	}
	if n := harness.Executions(e, "demo", "sleep_then"); n != 1 {
		t.Fatalf("the upstream ran the tool %d times, want 1", n)
	}
	long := strings.TrimSpace(run(0, "call", "--background", "demo.wait", `{"seconds": 60}`))
	if out := run(0, "jobs", "cancel", long); !strings.Contains(out, "cancelled") || !strings.Contains(out, "job cancelled with mcpx jobs cancel") {
		t.Fatalf("mcpx jobs cancel: %s", out)
	}
	if out := run(0, "status"); strings.Contains(out, long) {
		t.Errorf("status still shows the cancelled job:\n%s", out)
	}
	if out := run(0, "jobs"); !strings.Contains(out, id) || !strings.Contains(out, long) {
		t.Errorf("mcpx jobs lacks a job:\n%s", out)
	}
	if out := run(1, "jobs", "show", "job_nosuchjob"); !strings.Contains(out, "no job has this id") {
		t.Errorf("unknown id: %s", out)
	}
	run(2, "jobs", "frob", "x")
	run(2, "jobs", "show")
}
