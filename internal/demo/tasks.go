package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// The tasks extension of 2026-07-28 (io.modelcontextprotocol/tasks),
// served with Options.Tasks over stdio: discover names it, and the
// research tool, called by a request whose clientCapabilities name it,
// answers at once with a task (resultType "task") and works on in the
// background, a step every seconds, its statusMessage saying which; with
// ask it stops halfway at input_required, asking for a confirmation
// (inputRequests), until tasks/update brings the answer. tasks/get
// inlines the result or error, tasks/cancel ends it (recorded as a
// cancellation whose reason names tasks/cancel). Called by any other
// request, research works in the call and answers plainly (and cannot
// ask). Tasks are kept until the server stops, which cancels those still
// working.

// demoTask is one task of the research tool.
type demoTask struct {
	id      string
	created time.Time
	cancel  context.CancelCauseFunc

	mu      sync.Mutex
	status  string
	message string
	updated time.Time
	result  json.RawMessage
	asking  json.RawMessage      // inputRequests while input_required
	answers chan json.RawMessage // tasks/update's inputResponses, while asking
}

// demoTasks are a server's tasks, by id.
type demoTasks struct {
	mu sync.Mutex
	m  map[string]*demoTask
}

func (d *demoTasks) get(id string) *demoTask {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.m[id]
}

func (d *demoTasks) add(t *demoTask) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[string]*demoTask{}
	}
	d.m[t.id] = t
}

// namesTasks reports whether a modern request's clientCapabilities name
// the extension.
func namesTasks(req *request) bool {
	raw, _ := req.obj.Get(mcp.MetaClientCapabilities)
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	_ = json.Unmarshal(raw, &caps)
	_, ok := caps.Extensions[mcp.ExtensionTasks]
	return ok
}

type researchArgs struct {
	Topic   string  `json:"topic"`
	Steps   int     `json:"steps"`
	Seconds float64 `json:"seconds"`
	Ask     bool    `json:"ask"`
}

func (a *researchArgs) check() error {
	if a.Steps < 1 || a.Steps > 100 || a.Seconds < 0 || a.Seconds > 60 {
		return errors.New("steps must be 1 to 100 and seconds 0 to 60")
	}
	return nil
}

var taskTools = []tool{{"research", runResearch}}

func runResearch(ctx context.Context, t *toolCall) (json.RawMessage, error) {
	a := researchArgs{Steps: 3, Seconds: 0.3}
	if err := t.decode(&a); err != nil {
		return errorResult("research: %v", err), nil
	}
	if !t.modern || !namesTasks(t.req) {
		if a.Ask {
			return errorResult("research: asking needs the %s extension", mcp.ExtensionTasks), nil
		}
		for i := 1; i <= a.Steps; i++ {
			if err := sleep(ctx, time.Duration(a.Seconds*float64(time.Second))); err != nil {
				return nil, err
			}
			t.progress.report(float64(i), float64(a.Steps), fmt.Sprintf("step %d of %d", i, a.Steps))
		}
		return textResult(fmt.Sprintf("researched %s in %d steps", a.Topic, a.Steps)), nil
	}
	s := t.s
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	now := time.Now()
	tctx, cancel := context.WithCancelCause(context.Background())
	task := &demoTask{id: "demo-task-" + hex.EncodeToString(b), created: now, updated: now, status: mcp.TaskWorking, cancel: cancel,
		message: "starting"}
	s.tasks.add(task)
	// Both goroutines are the server's: Serve waits for them.
	s.wg.Go(func() {
		select {
		case <-s.stopping:
			cancel(errStopping)
		case <-tctx.Done():
		}
	})
	s.wg.Go(func() {
		defer cancel(nil)
		s.work(tctx, task, a)
	})
	return s.taskJSON(task, mcp.ResultTypeTask), nil
}

// work runs a task's steps, asking halfway with ask.
func (s *server) work(ctx context.Context, task *demoTask, a researchArgs) {
	answer := ""
	for i := 1; i <= a.Steps; i++ {
		if a.Ask && i == (a.Steps+1)/2 && answer == "" {
			var err error
			if answer, err = task.ask(ctx, a.Topic); err != nil {
				return
			}
		}
		task.set(mcp.TaskWorking, fmt.Sprintf("step %d of %d", i, a.Steps), nil)
		if sleep(ctx, time.Duration(a.Seconds*float64(time.Second))) != nil {
			return
		}
	}
	text := fmt.Sprintf("researched %s in %d steps", a.Topic, a.Steps)
	if answer != "" {
		text += " (confirmed: " + answer + ")"
	}
	task.set(mcp.TaskCompleted, "", textResult(text))
}

// ask puts the task at input_required until tasks/update answers.
func (task *demoTask) ask(ctx context.Context, topic string) (string, error) {
	q := marshal(map[string]any{"confirm": map[string]any{"method": mcp.MethodElicitationCreate, "params": map[string]any{
		"mode": "form", "message": "Research " + topic + "?",
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "string"}}, "required": []string{"ok"}},
	}}})
	ch := make(chan json.RawMessage, 1)
	task.mu.Lock()
	task.status, task.message, task.asking, task.answers, task.updated = mcp.TaskInputRequired, "waiting for a confirmation", q, ch, time.Now()
	task.mu.Unlock()
	select {
	case raw := <-ch:
		var r struct {
			Confirm struct {
				Action  string `json:"action"`
				Content struct {
					OK string `json:"ok"`
				} `json:"content"`
			} `json:"confirm"`
		}
		_ = json.Unmarshal(raw, &r)
		return r.Confirm.Action + " " + r.Confirm.Content.OK, nil
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

// set moves the task on, unless it has ended.
func (task *demoTask) set(status, message string, result json.RawMessage) {
	task.mu.Lock()
	defer task.mu.Unlock()
	if task.status == mcp.TaskCompleted || task.status == mcp.TaskCancelled {
		return
	}
	task.status, task.message, task.result, task.asking, task.answers, task.updated = status, message, result, nil, nil, time.Now()
}

// taskJSON is the task as the extension writes it, resultType rt.
func (s *server) taskJSON(task *demoTask, rt string) json.RawMessage {
	task.mu.Lock()
	defer task.mu.Unlock()
	o := map[string]any{"resultType": rt, "taskId": task.id, "status": task.status,
		"createdAt": task.created.UTC().Format(time.RFC3339Nano), "lastUpdatedAt": task.updated.UTC().Format(time.RFC3339Nano),
		"ttlMs": 600000, "pollIntervalMs": 100}
	if task.message != "" {
		o["statusMessage"] = task.message
	}
	if task.asking != nil {
		o["inputRequests"] = task.asking
	}
	if task.result != nil {
		o["result"] = task.result
	}
	return marshal(o)
}

// taskMethod serves tasks/get, tasks/update and tasks/cancel.
func (s *server) taskMethod(req *request) (json.RawMessage, error) {
	if !namesTasks(req) {
		return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredCapability, Message: req.msg.Method + " needs the " + mcp.ExtensionTasks + " extension"}
	}
	var p struct {
		TaskID         string          `json:"taskId"`
		InputResponses json.RawMessage `json:"inputResponses"`
	}
	_ = json.Unmarshal(req.msg.Params, &p)
	task := s.tasks.get(p.TaskID)
	if task == nil {
		return nil, invalidParams("unknown task %q", p.TaskID)
	}
	switch req.msg.Method {
	case mcp.MethodTasksUpdate:
		task.mu.Lock()
		if task.answers != nil && len(p.InputResponses) > 0 {
			task.answers <- p.InputResponses
			task.answers = nil
		}
		task.mu.Unlock()
		return json.RawMessage(mcp.CompleteResult), nil
	case mcp.MethodTasksCancel:
		task.mu.Lock()
		live := task.status != mcp.TaskCompleted && task.status != mcp.TaskCancelled
		if live {
			task.status, task.message, task.asking, task.updated = mcp.TaskCancelled, "cancelled with tasks/cancel", nil, time.Now()
		}
		task.mu.Unlock()
		if live {
			task.cancel(errors.New(mcp.MethodTasksCancel))
			s.record(Event{Event: EventCancelled, Tool: "research", Reason: "tasks/cancel " + task.id})
		}
		return json.RawMessage(mcp.CompleteResult), nil
	}
	return s.taskJSON(task, mcp.ResultTypeComplete), nil
}
