package jobs

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestJobBackground: mcpx_call with background returns a job at once; a
// retry of the same call attaches to it; mcpx_job returns the tool's own
// result; the upstream ran the tool exactly once.
func TestJobBackground(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		call := map[string]any{"name": "mcpx_call", "arguments": map[string]any{
			"name": "demo__sleep_then", "arguments": map[string]any{"seconds": 2, "text": "exported"}, "background": true}}
		first := harness.JobOf(t, h.Result(h.Request("tools/call", call), harness.RelayWait))
		if first.Status != "running" || first.Poll < 1 || !strings.HasPrefix(first.JobID, "job_") {
			t.Fatalf("background call: %+v", first)
		}
		again := harness.JobOf(t, h.Result(h.Request("tools/call", call), harness.RelayWait))
		if again.JobID != first.JobID {
			t.Fatalf("the retry started job %s, not attached to %s", again.JobID, first.JobID)
		}
		res := h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": first.JobID, "wait_seconds": 20}}), harness.RelayWait)
		if got := harness.FirstText(t, res); got != "exported" {
			t.Fatalf("mcpx_job result %s", res)
		}
		if n := harness.Executions(e, "demo", "sleep_then"); n != 1 {
			t.Fatalf("the upstream ran the tool %d times, want 1", n)
		}
		// Bad input: each a tool error that says what is wrong.
		for _, c := range []struct {
			tool string
			args any
			want string
		}{
			{"mcpx_job", map[string]any{"job_id": "job_nosuchjob"}, "no job has this id"},
			{"mcpx_job", map[string]any{"job_id": ""}, "needs the job_id"},
			{"mcpx_job", map[string]any{"job_id": 42}, "needs the job_id"},
			{"mcpx_job", "not an object", "needs the job_id"},
			{"mcpx_job_cancel", map[string]any{"job_id": "job_nosuchjob"}, "no job has this id"},
			{"mcpx_job_cancel", map[string]any{}, "needs a job_id"},
			{"mcpx_call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": first.JobID}}, "calls upstream tools"},
		} {
			res := h.Result(h.Request("tools/call", map[string]any{"name": c.tool, "arguments": c.args}), harness.RelayWait)
			if text := harness.FirstText(t, res); !strings.Contains(text, c.want) || string(harness.RawMember(t, res, "isError")) != "true" {
				t.Errorf("%s %v: %s, want an error saying %q", c.tool, c.args, res, c.want)
			}
		}
		// Another stream host is the same local user: it reads the job
		// (TestJobPrincipals has the principals that may not).
		other := e.StartHost(mode, cfg)
		other.Initialize("2025-11-25")
		if got := harness.FirstText(t, other.Result(other.Request("tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": first.JobID}}), harness.RelayWait)); got != "exported" {
			t.Errorf("another stream host reading the job: %q", got)
		}
		// A finished job reads the same again, and a cancel of it says so.
		res = h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_job_cancel", "arguments": map[string]any{"job_id": first.JobID}}), harness.RelayWait)
		if st := harness.JobOf(t, res); st.Status != "completed" {
			t.Errorf("cancel of a finished job: %s", res)
		}
	})
}

// TestJobCancel: mcpx_job_cancel ends the job, and the upstream hears why.
func TestJobCancel(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}))
		h.Initialize("2025-11-25")
		job := harness.JobOf(t, h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_call", "arguments": map[string]any{
			"name": "demo__wait", "arguments": map[string]any{"seconds": 60}, "background": true}}), harness.RelayWait))
		e.WaitRecord("demo", harness.RelayWait, func(ev demo.Event) bool { return ev.Event == "request" && ev.Tool == "wait" })
		res := h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_job_cancel", "arguments": map[string]any{"job_id": job.JobID}}), harness.RelayWait)
		if st := harness.JobOf(t, res); st.Status != "cancelled" || st.Error != "job cancelled with mcpx_job_cancel" {
			t.Fatalf("cancel: %s", res)
		}
		ev := e.WaitRecord("demo", harness.RelayWait, func(ev demo.Event) bool { return ev.Event == "cancelled" })
		if ev.Reason != "job cancelled with mcpx_job_cancel" {
			t.Fatalf("the upstream was told %q", ev.Reason)
		}
	})
}

// TestJobHardTimer: behind a host whose hard timer is 5 s (the config
// says so of the test host's name; a 1 s margin, room on a loaded
// machine), a silent call of 12 s becomes a job
// before the timer fires; its result is fetched with mcpx_job; the
// upstream runs it once.
func TestJobHardTimer(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) { testJobHardTimer(t, mode) })
}

func testJobHardTimer(t *testing.T, mode mcpxtest.Mode) {
	e := mcpxtest.NewEnv(t)
	h := e.StartHost(mode, e.WriteConfig(map[string]any{"hosts": map[string]any{
		"mcpxtest": map[string]any{"timeout": "5s", "resetOnProgress": false},
	}}, mcpxtest.Demo{Name: "demo"}))
	h.Initialize("2025-11-25")
	const timer = 5 * time.Second
	start := time.Now()
	call := map[string]any{"name": "demo__sleep_then", "arguments": map[string]any{"seconds": 12, "text": "six"}}
	res := h.Result(h.Request("tools/call", call), harness.RelayWait)
	if took := time.Since(start); took >= timer {
		t.Fatalf("answered after %v, past the host's %v timer", took, timer)
	}
	job := harness.JobOf(t, res)
	if text := harness.FirstText(t, res); !strings.Contains(text, "mcpx_job") || !strings.Contains(text, job.JobID) {
		t.Errorf("the text does not tell the model how to go on: %q", text)
	}
	// The model retries: it waits on the same job, never past the timer.
	start = time.Now()
	again := harness.JobOf(t, h.Result(h.Request("tools/call", call), harness.RelayWait))
	if again.JobID != job.JobID || time.Since(start) >= timer {
		t.Fatalf("retry: job %s after %v (first %s)", again.JobID, time.Since(start), job.JobID)
	}
	var got json.RawMessage
	deadline := time.Now().Add(harness.RelayWait)
	for {
		start = time.Now()
		got = h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": job.JobID, "wait_seconds": 60}}), harness.RelayWait)
		if time.Since(start) >= timer {
			t.Fatalf("mcpx_job waited %v, past the host's timer", time.Since(start))
		}
		if !strings.Contains(string(got), `"job_id"`) || time.Now().After(deadline) {
			break
		}
	}
	if text := harness.FirstText(t, got); text != "six" {
		t.Fatalf("job result %s", got)
	}
	if n := harness.Executions(e, "demo", "sleep_then"); n != 1 {
		t.Fatalf("the upstream ran the tool %d times, want 1", n)
	}
}
