package harness

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mcpx/internal/mcpxtest"
)

// RunJobHost runs jobhost.mjs with spec and returns its report.
func RunJobHost(t *testing.T, node, interop string, e *mcpxtest.Env, spec map[string]any) *JobHostReport {
	t.Helper()
	out, stderr, err := RunHostScript(t, e, node, interop, "jobhost.mjs", spec)
	var r JobHostReport
	if jerr := json.Unmarshal(out, &r); jerr != nil || err != nil || !r.OK {
		t.Fatalf("jobhost.mjs: %v %v %s\nstdout %s\nstderr %s", err, jerr, r.Error, out, stderr)
	}
	return &r
}

// CheckJobHost judges a hard-timer host's run: a job before its timer,
// the retry attached to it, every poll within the timer, the result read.
func CheckJobHost(t *testing.T, r *JobHostReport, timer time.Duration) {
	t.Helper()
	limit := int(timer.Milliseconds())
	if r.First.Structured == nil || r.First.Structured.Status != "running" || r.First.Ms >= limit || !strings.Contains(r.First.Text, "mcpx_job") {
		t.Fatalf("first call: %+v, want a running job within %d ms", r.First, limit)
	}
	if id := r.First.Structured.JobID; r.Retry.Structured == nil || r.Retry.Structured.JobID != id || r.Retry.Ms >= limit {
		t.Errorf("retry: %+v, want job %s within %d ms", r.Retry, id, limit)
	}
	for i, p := range r.Polls {
		if p.Ms >= limit {
			t.Errorf("mcpx_job poll %d took %d ms, past the host's timer", i, p.Ms)
		}
	}
	if r.Final == nil || r.Final.Text != "the export is done" || r.Final.IsError {
		t.Errorf("final: %+v after %d polls", r.Final, len(r.Polls))
	}
}
