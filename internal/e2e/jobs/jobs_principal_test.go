package jobs

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestJobPrincipals: a stream host's job belongs to the local user. The
// host leaves, and the host started again reads the job's result with
// mcpx_job (a restarted host finds its jobs; in process, the job re-ran
// as an idempotent tool's does after a restart). An HTTP host with a token
// of its own is another principal: it may neither read nor cancel that
// job, and the local host may not read the HTTP host's.
func TestJobPrincipals(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		out, stderr, code := e.Run(30*time.Second, "token", "--name", "alice")
		if code != 0 {
			t.Fatalf("mcpx token --name alice: exit %d %s", code, stderr)
		}
		background := func(seconds float64, text string) map[string]any {
			return map[string]any{"name": "mcpx_call", "arguments": map[string]any{"background": true,
				"name": "demo__sleep_then", "arguments": map[string]any{"seconds": seconds, "text": text}}}
		}
		readJob := func(id string) map[string]any {
			return map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": id, "wait_seconds": 20}}
		}

		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		job := harness.JobOf(t, h.Result(h.Request("tools/call", background(2, "exported")), harness.RelayWait)).JobID
		h.Close()
		again := e.StartHost(mode, cfg)
		again.Initialize("2025-11-25")
		if got := harness.FirstText(t, again.Result(again.Request("tools/call", readJob(job)), harness.RelayWait)); got != "exported" {
			t.Errorf("the restarted host reading its job: %q, want the tool's result", got)
		}
		// Through the daemon the job ran on while no host was there; in
		// process, the gateway ended with its host, the job was
		// interrupted, and the tool, idempotent, ran once more when the
		// gateway started again.
		if n, want := harness.Executions(e, "demo", "sleep_then"), map[mcpxtest.Mode]int{mcpxtest.Daemon: 1, mcpxtest.InProcess: 2}[mode]; n != want {
			t.Errorf("the upstream ran the tool %d times, want %d", n, want)
		}

		m := harness.StartHTTP(t, e, mode, cfg, false)
		alice := harness.NewRawHost(t, &harness.HTTPMCPX{URL: m.URL, Token: strings.TrimSpace(out), LogBuf: m.LogBuf})
		alice.Initialize("2025-11-25")
		aliceCall := func(id string, params map[string]any) string {
			t.Helper()
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
			r := alice.Do(string(b), map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
			if r.Status != http.StatusOK || len(r.Msgs) == 0 || r.Msgs[len(r.Msgs)-1].Error != nil {
				t.Fatalf("alice's %s: %d %s", id, r.Status, r.Body)
			}
			return string(r.Msgs[len(r.Msgs)-1].Result)
		}
		for _, tool := range []string{"mcpx_job", "mcpx_job_cancel"} {
			res := aliceCall(tool, map[string]any{"name": tool, "arguments": map[string]any{"job_id": job}})
			if !strings.Contains(res, "belongs to another principal") || !strings.Contains(res, `"isError":true`) {
				t.Errorf("alice's %s of the local user's job: %s, want refused", tool, res)
			}
		}
		// A task is a job: the same rule.
		var created struct{ Task struct{ TaskID string } }
		if err := json.Unmarshal(again.Result(again.Request("tools/call", map[string]any{"name": "demo__echo",
			"arguments": map[string]any{"text": "hi"}, "task": map[string]any{}}), harness.RelayWait), &created); err != nil || created.Task.TaskID == "" {
			t.Fatalf("a task-augmented call: %v", err)
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "tg", "method": "tasks/get", "params": map[string]any{"taskId": created.Task.TaskID}})
		if r := alice.Do(string(b), map[string]string{"Mcp-Protocol-Version": "2025-11-25"}); len(r.Msgs) != 1 || r.Msgs[0].Error == nil ||
			r.Msgs[0].Error.Code != -32602 || !strings.Contains(r.Msgs[0].Error.Message, "belongs to another principal") {
			t.Errorf("alice's tasks/get of the local user's task: %d %s, want -32602", r.Status, r.Body)
		}
		var st struct {
			StructuredContent harness.JobState `json:"structuredContent"`
		}
		if err := json.Unmarshal([]byte(aliceCall("bg", background(0, "alice's"))), &st); err != nil || st.StructuredContent.JobID == "" {
			t.Fatalf("alice's background call: %v %+v", err, st)
		}
		res := again.Result(again.Request("tools/call", readJob(st.StructuredContent.JobID)), harness.RelayWait)
		if text := harness.FirstText(t, res); !strings.Contains(text, "belongs to another principal") {
			t.Errorf("the local host reading alice's job: %s, want refused", res)
		}
	})
}
