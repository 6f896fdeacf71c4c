package codemode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// scriptJob reads a script result's structuredContent as a job's state.
func scriptJob(t *testing.T, res *mcp.CallToolResult) (harness.JobState, json.RawMessage) {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var js struct {
		harness.JobState
		Progress json.RawMessage `json:"progress"`
	}
	if err := json.Unmarshal(raw, &js); err != nil || js.JobID == "" {
		t.Fatalf("not a job result: %s (%s)", raw, harness.ScriptText(res))
	}
	return js.JobState, js.Progress
}

func callMeta(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// TestCodeModeJobs: behind a go-sdk host whose hard timer is 5 s (from
// the config; a 1 s margin, room on a loaded machine), a background script is a job at once: mcpx_job reads its
// progress, mcpx_job_cancel stops it and its inner calls are cancelled at
// the demo with the job's cause; a script that would outlive the timer
// becomes a job before it fires, a retry waits on the same job, and
// mcpx_job returns the script's own result, its inner call run once.
func TestCodeModeJobs(t *testing.T) {
	const timer = 5 * time.Second
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"hosts": map[string]any{
			"mcpx-e2e-gosdk": map[string]any{"timeout": timer.String(), "resetOnProgress": false},
		}}, mcpxtest.Demo{Name: "demo"})
		cs := harness.ConnectGoSDK(t, e, mode, cfg, "2025-11-25", harness.NewProgressLog())
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()

		// In the background: the job at once, its progress, its cancel.
		start := time.Now()
		res := harness.ExecScript(t, ctx, cs, `progress(1, 4, "two waits");
await Promise.all([tools.demo.wait({ seconds: 60 }), tools.demo.wait({ seconds: 60 })]);
return "never"`, map[string]any{"background": true})
		job, _ := scriptJob(t, res)
		if job.Status != "running" || time.Since(start) >= timer {
			t.Fatalf("background script: %+v after %v", job, time.Since(start))
		}
		deadline := time.Now().Add(harness.RelayWait)
		for countTool(e.Records("demo"), demo.EventRequest, "wait") < 2 {
			if time.Now().After(deadline) {
				t.Fatal("the script's two calls never reached the demo")
			}
			time.Sleep(5 * time.Millisecond)
		}
		for {
			st, p := scriptJob(t, callMeta(t, ctx, cs, "mcpx_job", map[string]any{"job_id": job.JobID, "wait_seconds": 0}))
			if st.Status != "running" {
				t.Fatalf("mcpx_job of the running script: %+v", st)
			}
			if strings.Contains(string(p), `"two waits"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the job's progress never showed the script's: %s", p)
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancelAt := time.Now()
		st, _ := scriptJob(t, callMeta(t, ctx, cs, "mcpx_job_cancel", map[string]any{"job_id": job.JobID}))
		if st.Status != "cancelled" || st.Error != "job cancelled with mcpx_job_cancel" {
			t.Fatalf("mcpx_job_cancel: %+v", st)
		}
		for len(cancels(e.Records("demo"))) < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("the demo saw %d cancels, want 2", len(cancels(e.Records("demo"))))
			}
			time.Sleep(5 * time.Millisecond)
		}
		for _, ev := range cancels(e.Records("demo")) {
			if !strings.Contains(ev.Reason, "script host-") || !strings.HasSuffix(ev.Reason, "stopped: job cancelled with mcpx_job_cancel") {
				t.Errorf("the demo was told %q, want the script's stop by the job's cancel", ev.Reason)
			}
		}
		t.Logf("mcpx_job_cancel to both inner calls cancelled at the demo: %v", time.Since(cancelAt))

		// Past the host's hard timer: a job before it fires; the retry
		// attaches; the result is the script's own.
		code := `const r = await tools.demo.sleep_then({ seconds: 10, text: "slept" }); return { said: r }`
		start = time.Now()
		res = harness.ExecScript(t, ctx, cs, code, nil)
		job, _ = scriptJob(t, res)
		if took := time.Since(start); took >= timer || job.Status != "running" || !strings.Contains(harness.ScriptText(res), "mcpx_job") {
			t.Fatalf("long script answered after %v with %+v: %s", took, job, harness.ScriptText(res))
		}
		start = time.Now()
		if again, _ := scriptJob(t, harness.ExecScript(t, ctx, cs, code, nil)); again.JobID != job.JobID || time.Since(start) >= timer {
			t.Fatalf("retry: job %s after %v, want %s", again.JobID, time.Since(start), job.JobID)
		}
		for {
			start = time.Now()
			res = callMeta(t, ctx, cs, "mcpx_job", map[string]any{"job_id": job.JobID, "wait_seconds": 60})
			if time.Since(start) >= timer {
				t.Fatalf("mcpx_job waited %v, past the host's timer", time.Since(start))
			}
			if raw, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(raw), `"job_id"`) {
				if !strings.Contains(string(raw), `"slept"`) || res.IsError {
					t.Fatalf("the job's result: %s %s", raw, harness.ScriptText(res))
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the script's job never ended")
			}
		}
		if n := harness.Executions(e, "demo", "sleep_then"); n != 1 {
			t.Fatalf("the demo ran sleep_then %d times, want 1", n)
		}
		// A quick script within the timer is answered as ever.
		if txt := harness.ScriptText(harness.ExecScript(t, ctx, cs, `return 1`, nil)); txt != "1" {
			t.Fatalf("a quick script: %s", txt)
		}
	})
}

// TestExecBackgroundCLI: mcpx exec --background prints a job id at once;
// mcpx jobs wait returns the script's result; mcpx jobs cancel stops a
// script and cancels its inner call at the demo.
func TestExecBackgroundCLI(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	run := harness.CliRun(t, e, cfg)
	script := func(code string) string {
		p := filepath.Join(t.TempDir(), "s.ts")
		if err := os.WriteFile(p, []byte(code), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var v struct {
		JobID string `json:"job_id"`
	}
	if err := json.Unmarshal([]byte(run(0, "exec", "--background", "--json", script(`return await tools.demo.sleep_then({ seconds: 1, text: "bg" })`))), &v); err != nil || !strings.HasPrefix(v.JobID, "job_") {
		t.Fatalf("mcpx exec --background --json: %v %+v", err, v)
	}
	var j struct {
		Status string          `json:"status"`
		Tool   string          `json:"tool"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(run(0, "jobs", "wait", v.JobID, "--json")), &j); err != nil || j.Status != "completed" || j.Tool != "mcpx_exec" || !strings.Contains(string(j.Result), "bg") {
		t.Fatalf("mcpx jobs wait: %+v %v", j, err)
	}
	long := strings.TrimSpace(run(0, "exec", "--background", script(`await tools.demo.wait({ seconds: 60 })`)))
	e.WaitRecord("demo", harness.RelayWait, func(ev demo.Event) bool { return ev.Event == "request" && ev.Tool == "wait" })
	if out := run(0, "jobs", "cancel", long); !strings.Contains(out, "cancelled") {
		t.Fatalf("mcpx jobs cancel: %s", out)
	}
	ev := e.WaitRecord("demo", harness.RelayWait, func(ev demo.Event) bool { return ev.Event == "cancelled" })
	if !strings.HasSuffix(ev.Reason, "stopped: job cancelled with mcpx jobs cancel") {
		t.Fatalf("the demo was told %q", ev.Reason)
	}
}
