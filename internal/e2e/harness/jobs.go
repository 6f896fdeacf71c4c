package harness

import (
	"encoding/json"
	"testing"

	"mcpx/internal/mcpxtest"
)

// MetaToolNames are mcpx's own tools, as every test host sees them (the
// gateway keeps jobs in both modes).
var MetaToolNames = []string{"mcpx_search", "mcpx_call", "mcpx_job", "mcpx_job_cancel", "mcpx_exec", "mcpx_describe"}

// JobState is a job result's structuredContent.
type JobState struct {
	JobID  string `json:"job_id"`
	Status string `json:"status"`
	Poll   int    `json:"poll_after_seconds"`
	Error  string `json:"error"`
}

func JobOf(t *testing.T, res json.RawMessage) JobState {
	t.Helper()
	var js JobState
	if err := json.Unmarshal(RawMember(t, res, "structuredContent"), &js); err != nil || js.JobID == "" {
		t.Fatalf("not a job result: %s (%v)", res, err)
	}
	return js
}

// Executions counts the tools/call requests for tool the demo received.
func Executions(e *mcpxtest.Env, server, tool string) int {
	n := 0
	for _, ev := range e.Records(server) {
		if ev.Event == "request" && ev.Tool == tool {
			n++
		}
	}
	return n
}
