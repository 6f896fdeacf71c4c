package jobs

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"mcpx/internal/apitype"
	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestV1CallBecomesJob: a streamed call with jobAfterMs that outlives it
// ends its stream with a job event and goes on as that job, whose wait
// stream then has its result, from one upstream execution; with
// jobResetOnProgress a call whose progress keeps coming stays a call to
// its result; closed before it becomes a job, the call is cancelled
// upstream naming the client. A negative jobAfterMs is a 400.
func TestV1CallBecomesJob(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	c, _ := harness.StartV1Daemon(t, e, cfg)

	// A silent call of 3 s, job after 0.5 s.
	s := c.Call(apitype.CallRequest{Tool: "demo__wait", Arguments: json.RawMessage(`{"seconds":3}`), JobAfterMs: 500, Client: "e2e-job"})
	if ev := s.Next(); ev.Type != "started" || ev.CallID == 0 {
		t.Fatalf("first event = %+v, want started", ev)
	}
	ev, _ := s.UntilEnd()
	if ev.Type != "job" || ev.Job == nil || ev.Job.ID == "" || ev.Job.Status != "running" || ev.Job.Tool != "wait" {
		t.Fatalf("last event = %+v, want a job event with the running job", ev)
	}
	s.Resp.Body.Close() // the job's, now: closing the stream leaves it running
	resp := c.Do(context.Background(), http.MethodGet, "/v1/jobs/"+ev.Job.ID+"/wait", nil, nil)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var end apitype.JobEvent
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &end); err != nil {
			t.Fatalf("wait event %s: %v", sc.Bytes(), err)
		}
	}
	if end.Type != "end" || end.Job == nil || end.Job.Status != "completed" || !strings.Contains(string(end.Job.Result), "waited") {
		t.Fatalf("the job's wait ended with %+v, want it completed with the wait's result", end)
	}
	runs := 0
	for _, r := range e.Records("demo") {
		if r.Event == demo.EventRequest && r.Tool == "wait" {
			runs++
		}
	}
	if runs != 1 {
		t.Errorf("the upstream ran the call %d times, want 1", runs)
	}

	// Progress every 0.1 s for 3 s; job after 2 s without progress.
	s = c.Call(apitype.CallRequest{Tool: "demo__export", Arguments: json.RawMessage(`{"seconds":3,"steps":30}`), JobAfterMs: 2000, JobResetOnProgress: true})
	s.Next()
	if ev, n := s.UntilEnd(); ev.Type != "result" || n == 0 || ev.ExitCode == nil || *ev.ExitCode != apitype.ExitOK {
		t.Errorf("a call with steady progress ended with %+v after %d progress events, want its result", ev, n)
	}

	// Closed before it becomes a job: cancelled, naming the client.
	s = c.Call(apitype.CallRequest{Tool: "demo__export", Arguments: json.RawMessage(`{"seconds":30,"steps":30}`), JobAfterMs: 60_000, Client: "e2e-job"})
	s.Next()
	if ev := s.Next(); ev.Type != "progress" {
		t.Fatalf("second event = %+v, want progress", ev)
	}
	s.Resp.Body.Close()
	var up demo.Event
	for _, r := range e.Records("demo") {
		if r.Event == demo.EventRequest && r.Tool == "export" {
			up = r // the last export: this call's, which has sent progress
		}
	}
	harness.CheckCancel(t, harness.UpstreamCancel(e, "demo", up.ID), "the client disconnected (e2e-job)")

	var apiErr apitype.Error
	if code := c.Json(http.MethodPost, apitype.PathV1Call, apitype.CallRequest{Tool: "demo__echo", JobAfterMs: -1}, &apiErr); code != http.StatusBadRequest || apiErr.Error == "" {
		t.Errorf("jobAfterMs -1: %d %+v, want 400 with a JSON error", code, apiErr)
	}
}
