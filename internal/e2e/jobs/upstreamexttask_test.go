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

// TestUpstreamExtensionTask: a 2026-07-28 upstream's own tasks (the
// demo's research tool with -tasks, which answers a call naming the tasks
// extension with a task, and asks halfway), in-process and against the
// daemon. mcpx names the extension upstream for hosts it can follow a
// task for, polls tasks/get, passes the statusMessage on as progress,
// relays the task's question and answers it with tasks/update:
//   - a 2025-11-25 host gets a plain call: its progress, the question as
//     an elicitation/create during the call, the result with its answer;
//   - its cancel sends the upstream tasks/cancel;
//   - a 2026-07-28 host that names the extension gets a task of mcpx's
//     that follows the upstream one: input_required with the question,
//     answered with tasks/update, then completed with the result;
//   - a 2026-07-28 host that does not gets a plain call, and the upstream
//     no task (the extension is not named upstream).
func TestUpstreamExtensionTask(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"jobs": map[string]any{"taskAfter": "200ms", "taskPollInterval": "100ms"}},
			mcpxtest.Demo{Name: "demo", Args: []string{"-tasks"}})
		h := e.StartHost(mode, cfg)
		harness.AskHost(h, `{"elicitation":{}}`)
		args := map[string]any{"topic": "tides", "steps": 4, "seconds": 0.2, "ask": true}

		// A legacy host: a plain call, asked during it.
		id := harness.SendCall(h, `"r1"`, "demo__research", args, map[string]any{"progressToken": "r1"})
		q := harness.Question(h, "elicitation/create")
		if !strings.Contains(string(q.Params), "Research tides?") {
			t.Fatalf("the host was asked %s", q.Params)
		}
		h.SendRaw(`{"jsonrpc":"2.0","id":` + q.ID.String() + `,"result":{"action":"accept","content":{"ok":"sure"}}}`)
		res := h.Result(id, harness.WaitLong)
		if got := harness.ResultText(t, res); got != "researched tides in 4 steps (confirmed: accept sure)" {
			t.Errorf("the legacy host's result: %s", res)
		}
		var steps []string
		for _, r := range harness.ProgressFor(t, h, `"r1"`) {
			if p, ok := harness.AsProgress(t, r); ok {
				steps = append(steps, string(p.Message))
			}
		}
		if !strings.Contains(strings.Join(steps, "|"), "step 4 of 4") {
			t.Errorf("progress from the task's status messages: %q", steps)
		}
		gets, updates := 0, 0
		for _, ev := range e.Records("demo") {
			if ev.Event != demo.EventRequest {
				continue
			}
			switch ev.Method {
			case "tasks/get":
				gets++
			case "tasks/update":
				updates++
			}
		}
		if gets < 2 || updates != 1 {
			t.Errorf("the upstream saw %d tasks/get and %d tasks/update", gets, updates)
		}

		// Its cancel reaches the upstream task.
		long := harness.SendCall(h, `"r2"`, "demo__research", map[string]any{"topic": "kelp", "steps": 100, "seconds": 1}, map[string]any{"progressToken": "r2"})
		h.WaitFor(harness.WaitLong, "progress of the second call", func(r mcpxtest.Received) bool {
			p, ok := harness.AsProgress(t, r)
			return ok && string(p.Token) == `"r2"`
		})
		harness.Cancel(h, `"r2"`, "the user gave up")
		h.NoResponse(long, 300*time.Millisecond)
		e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool {
			return ev.Event == demo.EventCancelled && strings.HasPrefix(ev.Reason, "tasks/cancel")
		})

		// A 2026-07-28 host that takes tasks: a task of mcpx's.
		h = e.StartHost(mode, cfg)
		created := extTaskOf(t, h.Result(h.Request("tools/call", takingTasks(map[string]any{"name": "demo__research", "arguments": args})), harness.WaitLong))
		if created.ResultType != "task" || !strings.HasPrefix(created.TaskID, "job_") {
			t.Fatalf("CreateTaskResult: %+v", created)
		}
		done := answerTask(t, h, created.TaskID, func(q json.RawMessage) bool {
			return strings.Contains(string(q), "Research tides?")
		}, map[string]any{"ok": "yes"})
		if got := harness.ResultText(t, done.Result); got != "researched tides in 4 steps (confirmed: accept yes)" {
			t.Errorf("mcpx's task's result: %s", done.Result)
		}

		// A 2026-07-28 host that does not: a plain call, no upstream task.
		before := len(e.Records("demo"))
		plain := h.Result(h.Request("tools/call", map[string]any{"name": "demo__research", "_meta": mcpxtest.ModernMeta(nil),
			"arguments": map[string]any{"topic": "sand", "steps": 2, "seconds": 0.1}}), harness.WaitLong)
		if got := harness.ResultText(t, plain); got != "researched sand in 2 steps" {
			t.Errorf("a plain 2026-07-28 call: %s", plain)
		}
		for _, ev := range e.Records("demo")[before:] {
			if ev.Method == "tasks/get" {
				t.Errorf("the upstream made a task of a call whose host takes none")
			}
		}
		t.Logf("legacy host: %d steps as progress, %d tasks/get, %d tasks/update; task %s followed the upstream's", len(steps), gets, updates, created.TaskID)
	})
}

func extTaskOf(t *testing.T, raw json.RawMessage) harness.ExtTask {
	t.Helper()
	var tk harness.ExtTask
	if err := json.Unmarshal(raw, &tk); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return tk
}

// takingTasks sets p's _meta to a 2026-07-28 request's whose host takes
// tasks and answers elicitations.
func takingTasks(p map[string]any) map[string]any {
	p["_meta"] = mcpxtest.ModernMeta(map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{
		"elicitation": map[string]any{}, "extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}})
	return p
}

// answerTask polls h's task (tasks/get) until it asks for input, accepts
// with content the input request that match picks (tasks/update), and
// returns the task once it has completed.
func answerTask(t *testing.T, h *mcpxtest.Host, taskID string, match func(json.RawMessage) bool, content map[string]any) harness.ExtTask {
	t.Helper()
	get := func() json.RawMessage {
		return h.Result(h.Request("tasks/get", takingTasks(map[string]any{"taskId": taskID})), harness.WaitLong)
	}
	var asked struct {
		Status        string                     `json:"status"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
	}
	for deadline := time.Now().Add(harness.WaitLong); asked.Status != "input_required"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("mcpx's task never read input_required: %+v", asked)
		}
		_ = json.Unmarshal(get(), &asked)
	}
	key := ""
	for k, q := range asked.InputRequests {
		if match(q) {
			key = k
		}
	}
	if key == "" {
		t.Fatalf("input_required without the upstream's question: %+v", asked)
	}
	h.Result(h.Request("tasks/update", takingTasks(map[string]any{"taskId": taskID,
		"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": content}}})), harness.WaitLong)
	var done harness.ExtTask
	for deadline := time.Now().Add(harness.WaitLong); done.Status != "completed"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("mcpx's task never completed: %+v", done)
		}
		done = extTaskOf(t, get())
	}
	return done
}
