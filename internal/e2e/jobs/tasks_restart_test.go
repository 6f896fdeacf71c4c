package jobs

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/mcpxtest"
)

// TestTasksSurviveKill: `mcpx serve --http` killed with one task done,
// one failed on mcpx's hard timeout, and one running. The next gateway, on
// the same job store, answers the same token holder's tasks/get for them:
// the done one completed, with the ttl it was granted (60000 ms, not the
// bound), its tasks/result the tool's; the failed one's tasks/result the
// timeout's own JSON-RPC error code; the running one failed, saying it
// was interrupted, and never run again.
func TestTasksSurviveKill(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	first, proc := spawnServeHTTP(t, e, cfg)
	h := harness.NewRawHost(t, first)
	h.Initialize("2025-11-25")
	done := createTask(t, h, "demo__sleep_then", map[string]any{"seconds": 0.1, "text": "kept"})
	if res := taskCall(t, h, "tasks/result", done); harness.ResultText(t, res.Result) != "kept" {
		t.Fatalf("tasks/result before the kill: %s", res.Result)
	}
	timedOut := createTaskMeta(t, h, "demo__wait", map[string]any{"seconds": 60}, map[string]any{"mcpx/maxTimeoutMs": 200})
	if res := taskCall(t, h, "tasks/result", timedOut); res.Error == nil || res.Error.Code != mcp.CodeTimeout {
		t.Fatalf("tasks/result of the timed-out task: %+v", res)
	}
	running := createTask(t, h, "demo__wait", map[string]any{"seconds": 60})
	// The timed-out task's wait was the first; the running task's is the
	// second.
	for deadline := time.Now().Add(harness.WaitLong); harness.Executions(e, "demo", "wait") < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the running task's wait did not reach the upstream within %s", harness.WaitLong)
		}
	}
	if err := proc.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-proc.Exited

	second, _ := spawnServeHTTP(t, e, cfg)
	h2 := harness.NewRawHost(t, second)
	h2.Initialize("2025-11-25")
	var task struct {
		Status, StatusMessage string
		TTL                   int64
	}
	if err := json.Unmarshal(taskCall(t, h2, "tasks/get", done).Result, &task); err != nil || task.Status != "completed" || task.TTL != 60000 {
		t.Fatalf("the done task after the kill: %+v %v", task, err)
	}
	if res := taskCall(t, h2, "tasks/result", timedOut); res.Error == nil || res.Error.Code != mcp.CodeTimeout {
		t.Fatalf("tasks/result of the timed-out task after the kill: %+v", res)
	}
	if res := taskCall(t, h2, "tasks/result", done); harness.ResultText(t, res.Result) != "kept" {
		t.Fatalf("tasks/result after the kill: %s", res.Result)
	}
	if err := json.Unmarshal(taskCall(t, h2, "tasks/get", running).Result, &task); err != nil || task.Status != "failed" ||
		!strings.Contains(task.StatusMessage, "interrupted") || !strings.Contains(task.StatusMessage, "not run again") {
		t.Fatalf("the running task after the kill: %+v %v", task, err)
	}
	if res := taskCall(t, h2, "tasks/result", running); res.Error == nil || !strings.Contains(res.Error.Message, "interrupted") {
		t.Fatalf("tasks/result of the interrupted task: %+v", res)
	}
	if n := harness.Executions(e, "demo", "wait"); n != 2 {
		t.Fatalf("wait ran %d times, want 2 (the timed-out task's, the interrupted one's): the interrupted one ran again", n)
	}
	t.Logf("after the kill: done task %s completed, running task %s: %s", done, running, task.StatusMessage)
}

// createTask makes a task-augmented tools/call and returns the task id.
func createTask(t *testing.T, h *harness.RawHost, tool string, args map[string]any) string {
	t.Helper()
	return createTaskMeta(t, h, tool, args, nil)
}

// createTaskMeta is createTask with a _meta (nil: none).
func createTaskMeta(t *testing.T, h *harness.RawHost, tool string, args, meta map[string]any) string {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": args, "task": map[string]any{"ttl": 60000}}
	if meta != nil {
		params["_meta"] = meta
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": params})
	r := h.Do(string(body), map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	var res struct {
		Task struct{ TaskID, Status string }
	}
	if len(r.Msgs) != 1 || r.Msgs[0].Error != nil || json.Unmarshal(r.Msgs[0].Result, &res) != nil || res.Task.Status != "working" {
		t.Fatalf("task-augmented tools/call: %d %s", r.Status, r.Body)
	}
	return res.Task.TaskID
}

// taskCall sends a tasks/* request for id and returns its answer.
func taskCall(t *testing.T, h *harness.RawHost, method, id string) *jsonrpc.Message {
	t.Helper()
	r := h.Do(fmt.Sprintf(`{"jsonrpc":"2.0","id":"t","method":%q,"params":{"taskId":%q}}`, method, id),
		map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	if len(r.Msgs) == 0 {
		t.Fatalf("%s: %d %s", method, r.Status, r.Body)
	}
	return r.Msgs[len(r.Msgs)-1]
}

// spawnServeHTTP starts `mcpx serve --http` on the user's job store and
// returns it with its process, for a test to kill; it is stopped at the
// test's end if still running.
func spawnServeHTTP(t *testing.T, e *mcpxtest.Env, cfg string) (*harness.HTTPMCPX, *harness.ServeHTTPChild) {
	t.Helper()
	tok, err := config.Token(e.Vars["XDG_STATE_HOME"] + "/mcpx/token")
	if err != nil {
		t.Fatal(err)
	}
	c := harness.StartServeHTTP(t, e, cfg, nil)
	return &harness.HTTPMCPX{URL: c.URL, Token: tok, LogBuf: c.Logs}, c
}
