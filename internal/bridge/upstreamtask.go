package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
	"mcpx/internal/upstream"
)

// Upstream tasks. A tool whose legacy (2025-11-25) server declares
// task-augmented tools/call, and whose execution.taskSupport is
// "required", is called as a task; a 2026-07-28 server may answer any
// call with a task of its own (the io.modelcontextprotocol/tasks
// extension, which mcpx names in the call's clientCapabilities for hosts
// that can be asked questions during a call: see Call.ClientCaps). mcpx
// follows the task within the call: tasks/get at the server's poll
// interval, its statusMessage passed on as progress under the host's
// token (each answer shows the server alive, as progress does), the
// questions it asks relayed to the call's host (a 2025-11-25 task's on
// the stream of the tasks/result mcpx waits on, a 2026-07-28 task's from
// its input_required status, answered with tasks/update), and its result
// returned as the call's; so the host, whatever it speaks, gets a plain
// call, or a job or task of mcpx's own that follows this one. If the call
// ends first (the host cancels, a timer fires), the server is sent
// tasks/cancel.

// Bounds of the poll interval mcpx follows an upstream task at.
const (
	minTaskPoll     = 50 * time.Millisecond
	defaultTaskPoll = time.Second
	maxTaskPoll     = 30 * time.Second
	// taskCancelWait bounds the tasks/cancel sent when a call gives up.
	taskCancelWait = 5 * time.Second
)

// upstreamTaskRequired reports whether server's tool must be called as a
// task of the server's own (2025-11-25).
func (b *Bridge) upstreamTaskRequired(ctx context.Context, server, tool string) bool {
	caps, err := b.r.Pool().Capabilities(ctx, server)
	if err != nil || !bytes.Contains(caps, []byte(`"tasks"`)) {
		return false // most servers: no parse of their capabilities on every call (BenchmarkCallTool: allocs/op unchanged)
	}
	var c struct {
		Tasks struct {
			Requests struct {
				Tools struct {
					Call json.RawMessage `json:"call"`
				} `json:"tools"`
			} `json:"requests"`
		} `json:"tasks"`
	}
	if json.Unmarshal(caps, &c) != nil || len(c.Tasks.Requests.Tools.Call) == 0 {
		return false
	}
	t, found, _ := b.r.Pool().Tool(ctx, server, tool)
	if !found {
		return false
	}
	var def struct {
		Execution struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	}
	return json.Unmarshal(t.Raw, &def) == nil && def.Execution.TaskSupport == "required"
}

// upstreamTask is a task as a server sends it, of either era.
type upstreamTask struct {
	TaskID         string  `json:"taskId"`
	Status         string  `json:"status"`
	StatusMessage  string  `json:"statusMessage"`
	PollInterval   float64 `json:"pollInterval"`   // 2025-11-25
	PollIntervalMs float64 `json:"pollIntervalMs"` // 2026-07-28
	// A 2026-07-28 tasks/get inlines the outcome and the questions.
	Result        json.RawMessage               `json:"result"`
	Error         *jsonrpc.Error                `json:"error"`
	InputRequests map[string]relay.InputRequest `json:"inputRequests"`

	modern bool
}

func (t *upstreamTask) poll() time.Duration {
	ms := t.PollInterval
	if t.modern {
		ms = t.PollIntervalMs
	}
	if ms <= 0 {
		return defaultTaskPoll
	}
	return min(max(time.Duration(ms)*time.Millisecond, minTaskPoll), maxTaskPoll)
}

// createdTask reads a call's result as the task the server made of the
// call: a 2025-11-25 CreateTaskResult if mcpx asked for one (asked), a
// 2026-07-28 one (resultType "task") otherwise.
func createdTask(res json.RawMessage, asked bool) (*upstreamTask, bool) {
	if !bytes.Contains(res, []byte(`"task"`)) {
		return nil, false // most results: not parsed
	}
	if asked {
		var created struct {
			Task *upstreamTask `json:"task"`
		}
		if json.Unmarshal(res, &created) != nil || created.Task == nil || created.Task.TaskID == "" {
			return nil, false // the server answered at once after all
		}
		return created.Task, true
	}
	var t struct {
		ResultType string `json:"resultType"`
		upstreamTask
	}
	if json.Unmarshal(res, &t) != nil || t.ResultType != mcp.ResultTypeTask || t.TaskID == "" {
		return nil, false
	}
	t.modern = true
	return &t.upstreamTask, true
}

// callAsTask calls c as a 2025-11-25 task of its server's.
func (b *Bridge) callAsTask(ctx context.Context, e *relay.Entry, c relay.Call) (json.RawMessage, error) {
	c.Params = c.Params.Clone()
	c.Params.Set("task", json.RawMessage(`{}`))
	return b.call(ctx, e, c, true)
}

// followTask follows task to its end within the call l: it returns the
// call's result, or relay.ErrHold with the request its host's questions
// came on (a 2025-11-25 tasks/result) for a Holdable call. If the call
// ends first, the server is sent tasks/cancel.
func (b *Bridge) followTask(l *relay.Live, task *upstreamTask) (json.RawMessage, *upstream.Request, error) {
	ctx, c := l.Context(), l.Call()
	b.log.Info("following an upstream task", "server", c.Server, "tool", c.Tool, "task", task.TaskID)
	f := &taskFollow{b: b, l: l, sess: l.Session(), c: c, id: task.TaskID, answered: map[string]bool{}}
	res, req, err := f.run(ctx, task)
	if err != nil && ctx.Err() != nil && !errors.Is(err, relay.ErrHold) {
		f.cancel(ctx) // the call gave up: the server's task is cancelled too
	}
	return res, req, err
}

// taskFollow is one upstream task being followed.
type taskFollow struct {
	b        *Bridge
	l        *relay.Live
	sess     *upstream.Session
	c        *relay.Call
	id       string
	steps    int
	last     string
	answered map[string]bool // a 2026-07-28 task's questions answered with tasks/update
}

func (f *taskFollow) run(ctx context.Context, task *upstreamTask) (json.RawMessage, *upstream.Request, error) {
	for {
		f.news(task)
		switch {
		case task.modern && task.Status == mcp.TaskInputRequired:
			if res, err := f.answer(ctx, task); res != nil || err != nil {
				return res, nil, err
			}
		case task.modern && isFinal(task.Status):
			res, err := f.outcome(task)
			return res, nil, err
		case task.Status == mcp.TaskInputRequired || isFinal(task.Status):
			// tasks/result waits for the end, and carries the server's
			// questions meanwhile (related to the task).
			req, err := f.sess.Start(mcp.MethodTasksResult, f.params(nil), f.c.ClientCaps, upstream.StartOptions{Inbound: f.l.Inbound(), Task: f.id})
			if err != nil {
				return nil, nil, err
			}
			res, err := f.l.Await(req)
			if err != nil {
				return nil, req, err
			}
			return withoutRelatedTask(res), req, nil
		}
		t := time.NewTimer(task.poll())
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, nil, context.Cause(ctx)
		}
		raw, err := f.send(ctx, mcp.MethodTasksGet, nil)
		if err != nil {
			var rpcErr *jsonrpc.Error
			if errors.As(err, &rpcErr) {
				return nil, nil, fmt.Errorf("upstream %q lost its task %s: %w", f.c.Server, f.id, err)
			}
			return nil, nil, err
		}
		next := &upstreamTask{modern: task.modern}
		if err := json.Unmarshal(raw, next); err != nil || next.Status == "" {
			return nil, nil, fmt.Errorf("upstream %q answered tasks/get for %s with no task", f.c.Server, f.id)
		}
		task = next
	}
}

func isFinal(status string) bool {
	return status == mcp.TaskCompleted || status == mcp.TaskFailed || status == mcp.TaskCancelled
}

// news passes a new statusMessage on as progress; any answer of the
// server's shows it alive, and restarts the call's idle timer.
func (f *taskFollow) news(task *upstreamTask) {
	if task.StatusMessage == "" || task.StatusMessage == f.last {
		f.l.Alive()
		return
	}
	f.last = task.StatusMessage
	f.steps++
	p := &jsonrpc.Object{}
	p.Set("progress", jsonrpc.MustMarshal(f.steps))
	p.Set("message", jsonrpc.Quote(task.StatusMessage))
	f.l.Progress(p)
}

// params are a tasks/* request's: the task's id, and more.
func (f *taskFollow) params(more map[string]json.RawMessage) *jsonrpc.Object {
	p := &jsonrpc.Object{}
	p.Set("taskId", jsonrpc.Quote(f.id))
	keys := make([]string, 0, len(more))
	for k := range more {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p.Set(k, more[k])
	}
	return p
}

// send sends a tasks/* request for the task, under the call's client
// capabilities (a 2026-07-28 server gates its tasks methods on them), and
// waits for its answer; if ctx ends first it is cancelled.
func (f *taskFollow) send(ctx context.Context, method string, more map[string]json.RawMessage) (json.RawMessage, error) {
	req, err := f.sess.Start(method, f.params(more), f.c.ClientCaps, upstream.StartOptions{})
	if err != nil {
		return nil, err
	}
	select {
	case <-req.Done():
		return req.Result()
	case <-ctx.Done():
		f.sess.Cancel(req, relay.Reason(context.Cause(ctx)))
		return nil, context.Cause(ctx)
	}
}

// outcome is an ended 2026-07-28 task's, as the call's.
func (f *taskFollow) outcome(task *upstreamTask) (json.RawMessage, error) {
	switch {
	case task.Status == mcp.TaskCompleted && len(task.Result) > 0:
		return task.Result, nil
	case task.Error != nil:
		return nil, task.Error
	case task.Status == mcp.TaskCancelled:
		return nil, fmt.Errorf("upstream %q cancelled its task %s: %s", f.c.Server, f.id, task.StatusMessage)
	}
	return nil, fmt.Errorf("upstream %q: its task %s ended %s without a result: %s", f.c.Server, f.id, task.Status, task.StatusMessage)
}

// answer puts a 2026-07-28 task's new questions to the call's host, and
// its answers to the server with tasks/update. It returns a result only
// when the call ends here: the host cannot be asked (a tool error, the
// server's task cancelled).
func (f *taskFollow) answer(ctx context.Context, task *upstreamTask) (json.RawMessage, error) {
	ir := &inputReq{requests: map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}{}}
	for k, q := range task.InputRequests {
		if !f.answered[k] {
			ir.keys = append(ir.keys, k)
			ir.requests[k] = struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}{q.Method, q.Params}
		}
	}
	if len(ir.keys) == 0 {
		return nil, nil // all answered: the server has yet to move on
	}
	sort.Strings(ir.keys)
	if f.c.Asker == nil || f.c.Holdable {
		f.cancel(ctx)
		return toolError(fmt.Sprintf("upstream %q's task needs input (%s), which mcpx cannot ask this host during a call", f.c.Server, ir.requests[ir.keys[0]].Method)), nil
	}
	answers, failed, pass, err := f.b.answerRound(ctx, f.l, ir)
	switch {
	case pass:
		return nil, nil // the host's task is not made yet: asked again at the next poll
	case err != nil:
		return nil, err
	case failed != nil:
		f.cancel(ctx)
		return failed, nil
	}
	if _, err := f.send(ctx, mcp.MethodTasksUpdate, map[string]json.RawMessage{"inputResponses": answers.Bytes()}); err != nil {
		return nil, fmt.Errorf("upstream %q refused the answers to its task %s: %w", f.c.Server, f.id, err)
	}
	for _, k := range ir.keys {
		if answers.Has(k) {
			f.answered[k] = true
		}
	}
	return nil, nil
}

// cancel sends the server tasks/cancel for the task, bounded by
// taskCancelWait whatever ctx's state.
func (f *taskFollow) cancel(ctx context.Context) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskCancelWait)
	defer cancel()
	if _, err := f.send(cctx, mcp.MethodTasksCancel, nil); err != nil {
		f.b.log.Warn("cancelling an upstream task", "server", f.c.Server, "task", f.id, "err", err)
	}
}

// withoutRelatedTask removes the related-task _meta of a task's result:
// the host asked for no task of the server's.
func withoutRelatedTask(res json.RawMessage) json.RawMessage {
	if !bytes.Contains(res, []byte(mcp.MetaRelatedTask)) {
		return res
	}
	obj, err := jsonrpc.ParseObject(res)
	if err != nil || !obj.Has("_meta") {
		return res
	}
	mcp.EditMeta(obj, func(m *jsonrpc.Object) { m.Delete(mcp.MetaRelatedTask) })
	return obj.Bytes()
}
