package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestV1CallStreams: /v1/tools lists the demo's tools with their schemas;
// /v1/call streams started, every progress in order, then the result with
// exit code 0; a tool's error result carries exit code 1; an unknown tool
// is a 404 and arguments that are not an object a 400, both JSON errors.
func TestV1CallStreams(t *testing.T) {
	t.Parallel()
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	c, _ := harness.StartV1Daemon(t, e, cfg)

	var tools apitype.Tools
	if code := c.Json(http.MethodGet, apitype.PathV1Tools, nil, &tools); code != http.StatusOK {
		t.Fatalf("GET /v1/tools: %d", code)
	}
	var export *apitype.Tool
	for i := range tools.Tools {
		if tools.Tools[i].Name == "demo__export" {
			export = &tools.Tools[i]
		}
	}
	if export == nil || export.Description == "" || !strings.Contains(string(export.InputSchema), `"seconds"`) {
		t.Fatalf("/v1/tools has no demo__export with its description and schema: %+v", tools.Tools)
	}

	s := c.Call(apitype.CallRequest{Tool: "demo__export", Arguments: json.RawMessage(`{"seconds":0.2,"steps":4}`)})
	if ev := s.Next(); ev.Type != "started" || ev.CallID == 0 || ev.Server != "demo" || ev.Tool != "export" {
		t.Fatalf("first event = %+v, want started with a call id", ev)
	}
	final, progress := s.Final()
	if final.Type != "result" || final.ExitCode == nil || *final.ExitCode != apitype.ExitOK || final.IsError {
		t.Fatalf("final event = %+v, want a result with exit code 0", final)
	}
	if len(progress) == 0 {
		t.Errorf("no progress event for an export of 4 steps")
	}
	for i := 1; i < len(progress); i++ {
		if progress[i].Progress <= progress[i-1].Progress {
			t.Errorf("progress out of order: %+v", progress)
		}
	}

	s = c.Call(apitype.CallRequest{Tool: "demo.fail"})
	s.Next()
	if final, _ = s.Final(); final.ExitCode == nil || *final.ExitCode != apitype.ExitToolError {
		t.Errorf("demo.fail: final event %+v, want exit code 1", final)
	}

	for _, tc := range []struct {
		req  apitype.CallRequest
		want int
	}{
		{apitype.CallRequest{Tool: "nosuch.tool"}, http.StatusNotFound},
		{apitype.CallRequest{Tool: "demo__echo", Arguments: json.RawMessage(`[1]`)}, http.StatusBadRequest},
	} {
		var apiErr apitype.Error
		if code := c.Json(http.MethodPost, apitype.PathV1Call, tc.req, &apiErr); code != tc.want || apiErr.Error == "" {
			t.Errorf("call %+v: %d %+v, want %d with a JSON error", tc.req, code, apiErr, tc.want)
		}
	}
}

// TestV1CloseCancels: a client that closes a call's stream mid-call
// cancels it upstream with the reason "the client disconnected (NAME)",
// NAME the client's own; the call leaves the daemon's status.
func TestV1CloseCancels(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	c, _ := harness.StartV1Daemon(t, e, cfg)

	s := c.Call(apitype.CallRequest{Tool: "demo__export", Arguments: json.RawMessage(`{"seconds":30,"steps":30}`), Client: "e2e-test"})
	s.Next()
	if ev := s.Next(); ev.Type != "progress" {
		t.Fatalf("second event = %+v, want progress", ev)
	}
	s.Resp.Body.Close()

	up := harness.ExportRequest(e)
	harness.CheckCancel(t, harness.UpstreamCancel(e, "demo", up.ID), "the client disconnected (e2e-test)")
	for deadline := time.Now().Add(harness.WaitLong); ; {
		var st apitype.Status
		c.Json(http.MethodGet, apitype.PathV1Status, nil, &st)
		if len(st.Calls) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cancelled call is still in the status: %+v", st.Calls)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestV1Cancel: POST /v1/cancel with the reason "user" ends the call as
// Ctrl-C ends mcpx call: upstream reason "interrupted by user", final
// event user_interrupt with exit code 130. An unknown call is a 404, a
// missing callId a 400.
func TestV1Cancel(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	c, _ := harness.StartV1Daemon(t, e, cfg)

	s := c.Call(apitype.CallRequest{Tool: "demo__export", Arguments: json.RawMessage(`{"seconds":30,"steps":30}`)})
	started := s.Next()
	if code := c.Json(http.MethodPost, apitype.PathV1Cancel, apitype.CancelCall{CallID: started.CallID, Reason: "user"}, nil); code != http.StatusNoContent {
		t.Fatalf("POST /v1/cancel: %d, want 204", code)
	}
	final, _ := s.Final()
	if final.Type != "error" || final.Error.Kind != "user_interrupt" || final.ExitCode == nil || *final.ExitCode != apitype.ExitInterrupted {
		t.Errorf("final event = %+v, want user_interrupt with exit code 130", final)
	}
	harness.CheckCancel(t, harness.UpstreamCancel(e, "demo", harness.ExportRequest(e).ID), "interrupted by user")

	var apiErr apitype.Error
	if code := c.Json(http.MethodPost, apitype.PathV1Cancel, apitype.CancelCall{CallID: started.CallID}, &apiErr); code != http.StatusNotFound {
		t.Errorf("cancelling a finished call: %d %+v, want 404", code, apiErr)
	}
	if code := c.Json(http.MethodPost, apitype.PathV1Cancel, map[string]any{}, &apiErr); code != http.StatusBadRequest {
		t.Errorf("cancel without callId: %d %+v, want 400", code, apiErr)
	}
}

// TestV1OnHTTPListener: with an HTTP listener, /v1 is served there behind
// the bearer token and the Host and Origin rules (JSON errors), and /v0
// is not.
func TestV1OnHTTPListener(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(map[string]any{"http": map[string]any{"listen": "127.0.0.1:0"}}, mcpxtest.Demo{Name: "demo"})
	_, st := harness.StartV1Daemon(t, e, cfg)
	if st.HTTP == "" {
		t.Fatalf("the daemon has no HTTP listener: %+v", st)
	}
	tok, err := os.ReadFile(st.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(st.HTTP, apitype.PathMCP)
	c := &harness.V1Client{T: t, Http: &http.Client{}, Base: base}
	t.Cleanup(c.Http.CloseIdleConnections)
	get := func(path string, header map[string]string) (int, apitype.Error) {
		ctx, cancel := context.WithTimeout(context.Background(), harness.WaitLong)
		defer cancel()
		resp := c.Do(ctx, http.MethodGet, path, nil, header)
		defer resp.Body.Close()
		var apiErr apitype.Error
		_ = json.NewDecoder(resp.Body).Decode(&apiErr)
		return resp.StatusCode, apiErr
	}
	if code, apiErr := get(apitype.PathV1Status, nil); code != http.StatusUnauthorized || apiErr.Error == "" {
		t.Errorf("no token: %d %+v, want 401 with a JSON error", code, apiErr)
	}
	c.Token = strings.TrimSpace(string(tok))
	if code, apiErr := get(apitype.PathV1Status, map[string]string{"Origin": "http://evil.example"}); code != http.StatusForbidden || apiErr.Error == "" {
		t.Errorf("foreign Origin: %d %+v, want 403 with a JSON error", code, apiErr)
	}
	if code, _ := get(apitype.PathStatus, nil); code != http.StatusNotFound {
		t.Errorf("GET /v0/status on the HTTP listener: %d, want 404", code)
	}
	var got apitype.Status
	if code := c.Json(http.MethodGet, apitype.PathV1Status, nil, &got); code != http.StatusOK || got.PID == 0 {
		t.Fatalf("GET /v1/status with the token: %d %+v", code, got)
	}
	s := c.Call(apitype.CallRequest{Tool: "demo__export", Arguments: json.RawMessage(`{"seconds":30,"steps":30}`), Client: "over-http"})
	s.Next()
	s.Next()
	s.Resp.Body.Close()
	harness.CheckCancel(t, harness.UpstreamCancel(e, "demo", harness.ExportRequest(e).ID), "the client disconnected (over-http)")
}

// TestV1Exec: /v1/exec runs a script as mcpx_exec does, streaming its
// progress() calls and its value with exit code 0; closing the stream
// stops the script, whose call in flight is cancelled upstream with a
// reason that carries the client's name.
func TestV1Exec(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	c, _ := harness.StartV1Daemon(t, e, cfg)

	resp := c.Do(context.Background(), http.MethodPost, apitype.PathV1Exec, apitype.ExecRequest{
		Code: `progress(1, 2, "half"); return await tools.demo.echo({a: 1})`,
	}, nil)
	s := &harness.CallStream{Resp: resp, Sc: bufio.NewScanner(resp.Body), T: t}
	t.Cleanup(func() { resp.Body.Close() })
	if ev := s.Next(); ev.Type != "started" || ev.CallID == 0 {
		t.Fatalf("first event = %+v, want started", ev)
	}
	final, progress := s.Final()
	if final.Type != "result" || final.ExitCode == nil || *final.ExitCode != apitype.ExitOK || !strings.Contains(string(final.Result), `\"a\":1`) {
		t.Fatalf("final event = %+v (result %s), want the echo with exit code 0", final, final.Result)
	}
	if len(progress) != 1 || progress[0].Message != "half" {
		t.Errorf("progress = %+v, want the script's one", progress)
	}

	resp = c.Do(context.Background(), http.MethodPost, apitype.PathV1Exec, apitype.ExecRequest{
		Code: `return await tools.demo.export({seconds: 30, steps: 30})`, Client: "e2e-exec",
	}, nil)
	t.Cleanup(func() { resp.Body.Close() })
	up := harness.ExportRequest(e)
	resp.Body.Close()
	ev := harness.UpstreamCancel(e, "demo", up.ID)
	if !strings.Contains(ev.Reason, "the client disconnected (e2e-exec)") {
		t.Errorf("upstream cancellation reason = %q, want it to name the client", ev.Reason)
	}
	t.Logf("the script's call was cancelled upstream with %q", ev.Reason)

	var apiErr apitype.Error
	if code := c.Json(http.MethodPost, apitype.PathV1Exec, apitype.ExecRequest{Code: "  "}, &apiErr); code != http.StatusBadRequest || apiErr.Error == "" {
		t.Errorf("an empty script: %d %+v, want 400 with a JSON error", code, apiErr)
	}
}

// TestV1ToolsListMeta: /v1/tools lists mcpx_exec among its meta tools,
// with the description hosts see (naming the servers) and its route, and
// mcpx_job and mcpx_job_cancel with the job routes that serve them.
func TestV1ToolsListMeta(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	c, _ := harness.StartV1Daemon(t, e, cfg)
	var tools apitype.Tools
	c.Json(http.MethodGet, apitype.PathV1Tools, nil, &tools)
	if len(tools.Meta) != 3 || tools.Meta[0].Name != "mcpx_exec" || tools.Meta[0].Route != apitype.PathV1Exec ||
		!strings.Contains(tools.Meta[0].Description, "tools.demo") || !strings.Contains(string(tools.Meta[0].InputSchema), `"code"`) {
		t.Fatalf("meta tools = %+v, want mcpx_exec naming tools.demo, with its schema and route, then the job tools", tools.Meta)
	}
	for i, want := range []struct{ name, route string }{{"mcpx_job", apitype.PathV1JobWait}, {"mcpx_job_cancel", apitype.PathV1JobCancel}} {
		if m := tools.Meta[i+1]; m.Name != want.name || m.Route != want.route || m.Description == "" || !strings.Contains(string(m.InputSchema), `"job_id"`) {
			t.Errorf("meta tool %d = %+v, want %s with its description, a job_id argument and route %s", i+1, m, want.name, want.route)
		}
	}
}

// TestV1Jobs: POST /v1/jobs starts a call as a job; its wait stream
// carries its progress and then the job, completed with the result.
// Closing a wait stream leaves the job running; cancelling it tells the
// upstream who did. An unknown job is a 404.
func TestV1Jobs(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	c, _ := harness.StartV1Daemon(t, e, cfg)

	wait := func(id string) (*http.Response, *bufio.Scanner) {
		resp := c.Do(context.Background(), http.MethodGet, "/v1/jobs/"+id+"/wait", nil, nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
			t.Fatalf("wait on job %s: %d %s", id, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp, bufio.NewScanner(resp.Body)
	}
	next := func(sc *bufio.Scanner) apitype.JobEvent {
		t.Helper()
		if !sc.Scan() {
			t.Fatalf("the wait stream ended: %v", sc.Err())
		}
		var ev apitype.JobEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("event %s: %v", sc.Bytes(), err)
		}
		return ev
	}

	var job apitype.Job
	if code := c.Json(http.MethodPost, apitype.PathV1Jobs, apitype.CallRequest{Tool: "demo__export", Arguments: json.RawMessage(`{"seconds":1,"steps":4}`)}, &job); code != http.StatusOK || job.ID == "" || job.Status != "running" {
		t.Fatalf("POST /v1/jobs: %d %+v", code, job)
	}
	_, sc := wait(job.ID)
	progress := 0
	for {
		ev := next(sc)
		if ev.Type == "progress" {
			progress++
			continue
		}
		if ev.Type != "end" || ev.Job == nil || ev.Job.Status != "completed" || !strings.Contains(string(ev.Job.Result), "exported") {
			t.Fatalf("final wait event = %+v, want end with the completed job and its result", ev)
		}
		break
	}
	if progress == 0 {
		t.Errorf("the wait stream carried no progress of a one-second export of 4 steps")
	}

	if code := c.Json(http.MethodPost, apitype.PathV1Jobs, apitype.CallRequest{Tool: "demo__export", Arguments: json.RawMessage(`{"seconds":30,"steps":30}`)}, &job); code != http.StatusOK {
		t.Fatalf("POST /v1/jobs: %d", code)
	}
	resp, sc := wait(job.ID)
	if ev := next(sc); ev.Type != "progress" {
		t.Fatalf("first wait event = %+v, want progress", ev)
	}
	resp.Body.Close()
	var got apitype.Job
	if c.Json(http.MethodGet, "/v1/jobs/"+job.ID, nil, &got); got.Status != "running" {
		t.Fatalf("after its wait stream closed, the job is %q, want running", got.Status)
	}
	if code := c.Json(http.MethodPost, "/v1/jobs/"+job.ID+"/cancel", apitype.CancelJob{Client: "e2e-jobs"}, &got); code != http.StatusOK || got.Status != "cancelled" {
		t.Fatalf("cancel: %d %+v, want the job cancelled", code, got)
	}
	var up demo.Event
	for _, ev := range e.Records("demo") {
		if ev.Event == demo.EventRequest && ev.Tool == "export" {
			up = ev // the last export: this job's
		}
	}
	harness.CheckCancel(t, harness.UpstreamCancel(e, "demo", up.ID), "job cancelled with e2e-jobs")

	var list apitype.Jobs
	if c.Json(http.MethodGet, apitype.PathV1Jobs, nil, &list); len(list.Jobs) != 2 {
		t.Errorf("GET /v1/jobs lists %d jobs, want 2: %+v", len(list.Jobs), list.Jobs)
	}
	var apiErr apitype.Error
	if code := c.Json(http.MethodGet, "/v1/jobs/nosuchjob", nil, &apiErr); code != http.StatusNotFound || apiErr.Error == "" {
		t.Errorf("an unknown job: %d %+v, want 404 with a JSON error", code, apiErr)
	}
}
