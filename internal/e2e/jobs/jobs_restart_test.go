package jobs

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestJobsSurviveKill: a daemon killed with two jobs running and one
// finished. At the next start the running one of a tool not annotated
// idempotent (the demo's wait) reads interrupted and is never run again;
// the one of a tool annotated idempotentHint (sleep_then) runs again once,
// says so, and finishes; the finished one still has its result. Read with
// `mcpx jobs show`.
func TestJobsSurviveKill(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	bg := func(tool string, args map[string]any) string {
		res := h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_call", "arguments": map[string]any{
			"name": "demo__" + tool, "arguments": args, "background": true}}), harness.RelayWait)
		return harness.JobOf(t, res).JobID
	}
	done := bg("sleep_then", map[string]any{"seconds": 0.1, "text": "kept"})
	res := h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": done, "wait_seconds": 20}}), harness.RelayWait)
	if harness.FirstText(t, res) != "kept" {
		t.Fatalf("finished job: %s", res)
	}
	running := bg("wait", map[string]any{"seconds": 60})
	idem := bg("sleep_then", map[string]any{"seconds": 3, "text": "ran again"})
	e.WaitRecord("demo", harness.RelayWait, func(ev demo.Event) bool { return ev.Event == "request" && ev.Tool == "wait" })
	for deadline := time.Now().Add(harness.WaitLong); len(requestsFor(e, "sleep_then")) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) { // the finished one's, and this one's
			t.Fatal("the idempotent job's call never reached the upstream")
		}
	}
	if err := syscall.Kill(harness.DaemonPID(t, e), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The host's next request starts a new daemon.
	h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{}}), harness.WaitLong)
	show := func(id string) map[string]any {
		out, stderr, code := e.Run(harness.RelayWait, "jobs", "show", id, "--json", "--config", cfg)
		if code != 0 {
			t.Fatalf("mcpx jobs show %s: exit %d: %s", id, code, stderr)
		}
		var j map[string]any
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatalf("mcpx jobs show: %v in %s", err, out)
		}
		return j
	}
	started := time.Now()
	if j := show(running); j["status"] != "interrupted" {
		t.Fatalf("the killed daemon's running job: %v", j)
	}
	t.Logf("interrupted read %v after the new daemon answered", time.Since(started))
	if j := show(done); j["status"] != "completed" {
		t.Fatalf("the finished job after the kill: %v", j)
	}
	out, stderr, code := e.Run(harness.RelayWait, "jobs", "wait", idem, "--json", "--config", cfg)
	var j map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &j) != nil {
		t.Fatalf("mcpx jobs wait: exit %d: %s %s", code, out, stderr)
	}
	if j["status"] != "completed" || j["attempt"] != 2.0 || !strings.Contains(fmt.Sprint(j["note"]), "run again once") || !strings.Contains(fmt.Sprint(j["result"]), "ran again") {
		t.Fatalf("the idempotent job after the kill: %v", j)
	}
	if n := len(requestsFor(e, "sleep_then")); n != 3 {
		t.Fatalf("sleep_then ran %d times, want 3: the finished job once, the idempotent one twice", n)
	}
	if n := harness.Executions(e, "demo", "wait"); n != 1 {
		t.Fatalf("the interrupted tool ran %d times, want 1", n)
	}
	out, _, code = e.Run(harness.RelayWait, "jobs", "--config", cfg)
	if code != 0 || !strings.Contains(out, running) || !strings.Contains(out, "interrupted") {
		t.Fatalf("mcpx jobs: exit %d\n%s", code, out)
	}
}

// requestsFor returns the demo's tools/call requests for tool.
func requestsFor(e *mcpxtest.Env, tool string) []demo.Event {
	var out []demo.Event
	for _, ev := range e.Records("demo") {
		if ev.Event == "request" && ev.Tool == tool {
			out = append(out, ev)
		}
	}
	return out
}
