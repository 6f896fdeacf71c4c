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

// TestTasksExtension: 2026-07-28 hosts and the tasks extension, in-process
// and against the daemon, over stdio. discover names the extension; a
// call of a host that names it in its request becomes a task once it has
// run mcpx.jobs.taskAfter (a flat CreateTaskResult, integer ttlMs and
// pollIntervalMs, no requestState), and tasks/get inlines its result once
// done; a quick call is answered at once; a host that does not name it
// gets the result of a slow call, and -32021 from tasks/*; tasks/result
// and tasks/list are 2025-11-25's (-32601); a cancel is acknowledged
// empty, reaches the upstream, and again once the task has ended; a tool
// configured required is refused to a host without the extension.
func TestTasksExtension(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"jobs": map[string]any{"taskAfter": "300ms", "taskPollInterval": "100ms"}},
			mcpxtest.Demo{Name: "demo", Fields: map[string]any{"taskTools": map[string]any{"wait": "required", "echo": "forbidden"}}})
		h := e.StartHost(mode, cfg)
		takes := map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}
		withExt := func(p map[string]any) map[string]any { p["_meta"] = mcpxtest.ModernMeta(takes); return p }
		plain := func(p map[string]any) map[string]any { p["_meta"] = mcpxtest.ModernMeta(nil); return p }
		task := func(raw json.RawMessage) harness.ExtTask {
			t.Helper()
			var tk harness.ExtTask
			if err := json.Unmarshal(raw, &tk); err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			return tk
		}
		get := func(id string) harness.ExtTask {
			return task(h.Result(h.Request("tasks/get", withExt(map[string]any{"taskId": id})), harness.WaitLong))
		}
		wantErr := func(method string, params map[string]any, code int64, part string) {
			t.Helper()
			got, _ := harness.ResponseError(t, h, h.Request(method, params))
			if got.Code != code || !strings.Contains(got.Message, part) {
				t.Errorf("%s: %d %q, want %d with %q", method, got.Code, got.Message, code, part)
			}
		}

		disc := h.Result(h.Request("server/discover", plain(map[string]any{})), harness.WaitLong)
		if !strings.Contains(string(disc), `"extensions":{"io.modelcontextprotocol/tasks":{}}`) || strings.Contains(string(disc), `"tasks":{"list"`) {
			t.Errorf("server/discover: %s", disc)
		}

		// A slow call becomes a task, polled to its inlined result.
		raw := h.Result(h.Request("tools/call", withExt(map[string]any{"name": "demo__sleep_then", "arguments": map[string]any{"seconds": 1.5, "text": "slept"}})), harness.WaitLong)
		created := task(raw)
		if created.ResultType != "task" || created.Status != "working" || created.TTLMs == nil || created.PollIntervalMs == nil ||
			created.PollIntervalMs.String() != "100" || strings.Contains(string(raw), `"task":`) || created.RequestState != nil {
			t.Fatalf("CreateTaskResult: %s", raw)
		}
		var done harness.ExtTask
		for deadline := time.Now().Add(harness.WaitLong); ; time.Sleep(100 * time.Millisecond) {
			if done = get(created.TaskID); done.Status != "working" || time.Now().After(deadline) {
				break
			}
		}
		if done.ResultType != "complete" || done.Status != "completed" || harness.ResultText(t, done.Result) != "slept" || done.RequestState != nil {
			t.Errorf("tasks/get once done: %+v %s", done, done.Result)
		}

		// A quick call is answered at once; so is a forbidden tool's.
		for _, tool := range []string{"demo__sleep_then", "demo__echo"} {
			res := h.Result(h.Request("tools/call", withExt(map[string]any{"name": tool, "arguments": map[string]any{"seconds": 0, "text": "quick"}})), harness.WaitLong)
			if strings.Contains(string(res), `"taskId"`) || !strings.Contains(string(res), `"resultType":"complete"`) {
				t.Errorf("quick %s: %s", tool, res)
			}
		}
		// Without the extension: the slow call's own result, and -32021.
		res := h.Result(h.Request("tools/call", plain(map[string]any{"name": "demo__sleep_then", "arguments": map[string]any{"seconds": 0.6, "text": "waited"}})), harness.WaitLong)
		if harness.ResultText(t, res) != "waited" || strings.Contains(string(res), "taskId") {
			t.Errorf("a slow call without the extension: %s", res)
		}
		for _, m := range []string{"tasks/get", "tasks/cancel"} {
			wantErr(m, plain(map[string]any{"taskId": created.TaskID}), -32021, "io.modelcontextprotocol/tasks")
		}
		wantErr("tasks/update", plain(map[string]any{"taskId": created.TaskID, "inputResponses": map[string]any{}}), -32021, "io.modelcontextprotocol/tasks")
		wantErr("tools/call", plain(map[string]any{"name": "demo__wait", "arguments": map[string]any{"seconds": 1}}), -32021, "only as a task")
		wantErr("tasks/result", withExt(map[string]any{"taskId": created.TaskID}), -32601, "method not found")
		wantErr("tasks/list", withExt(map[string]any{}), -32601, "method not found")
		wantErr("tasks/get", withExt(map[string]any{"taskId": "job_nosuchtask"}), -32602, "no job has this id")
		wantErr("tasks/update", withExt(map[string]any{"taskId": created.TaskID}), -32602, "inputResponses")
		ack := h.Result(h.Request("tasks/update", withExt(map[string]any{"taskId": created.TaskID, "inputResponses": map[string]any{"never-asked": map[string]any{}}})), harness.WaitLong)
		if string(ack) != `{"resultType":"complete"}` {
			t.Errorf("tasks/update of an ended task: %s", ack)
		}

		// Cancel mid-way: an empty ack, the upstream told, cancelled; again.
		long := task(h.Result(h.Request("tools/call", withExt(map[string]any{"name": "demo__wait", "arguments": map[string]any{"seconds": 60}})), harness.WaitLong))
		e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool { return ev.Event == "request" && ev.Tool == "wait" })
		for i := range 2 {
			if ack := h.Result(h.Request("tasks/cancel", withExt(map[string]any{"taskId": long.TaskID})), harness.WaitLong); string(ack) != `{"resultType":"complete"}` {
				t.Errorf("tasks/cancel %d: %s", i, ack)
			}
		}
		ev := e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool { return ev.Event == demo.EventCancelled && ev.Tool == "wait" })
		if got := get(long.TaskID); got.Status != "cancelled" || !strings.Contains(ev.Reason, "tasks/cancel") {
			t.Errorf("after tasks/cancel: %+v; the upstream was told %q", got, ev.Reason)
		}
		t.Logf("task %s polled to its result; cancel reached the upstream: %q", created.TaskID, ev.Reason)
	})
}
