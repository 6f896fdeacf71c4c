package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/upstream"
)

// A tool whose legacy (2025-11-25) server declares task-augmented
// tools/call, and whose execution.taskSupport is "required", is called as
// a task: the call asks for one, and mcpx follows it (tasks/get at the
// server's pollInterval, its statusMessage passed on as progress under
// the host's token, then tasks/result), so that the host, whatever it
// speaks, gets the tool's result; if the call ends first (the host
// cancels, a timer fires), the server is sent tasks/cancel.

// Bounds of the poll interval mcpx follows an upstream task at.
const (
	minTaskPoll     = 50 * time.Millisecond
	defaultTaskPoll = time.Second
	maxTaskPoll     = 30 * time.Second
	// taskCancelWait bounds the tasks/cancel sent when a call gives up.
	taskCancelWait = 5 * time.Second
)

// upstreamTaskRequired reports whether server's tool must be called as a
// task of the server's own.
func (r *Relay) upstreamTaskRequired(ctx context.Context, server, tool string) bool {
	caps, err := r.pool.Capabilities(ctx, server)
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
	t, found, _ := r.pool.Tool(ctx, server, tool)
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

// upstreamTask is a 2025-11-25 Task as a server sends it.
type upstreamTask struct {
	TaskID        string  `json:"taskId"`
	Status        string  `json:"status"`
	StatusMessage string  `json:"statusMessage"`
	PollInterval  float64 `json:"pollInterval"`
}

func (t *upstreamTask) poll() time.Duration {
	if t.PollInterval <= 0 {
		return defaultTaskPoll
	}
	return min(max(time.Duration(t.PollInterval)*time.Millisecond, minTaskPoll), maxTaskPoll)
}

// callAsTask calls c as a task of its server's and follows the task to
// its result.
func (r *Relay) callAsTask(ctx context.Context, e *Entry, c Call) (json.RawMessage, error) {
	c.Params = c.Params.Clone()
	c.Params.Set("task", json.RawMessage(`{}`))
	res, err := r.callTool(ctx, e, c)
	if err != nil {
		return nil, err
	}
	var created struct {
		Task *upstreamTask `json:"task"`
	}
	if json.Unmarshal(res, &created) != nil || created.Task == nil || created.Task.TaskID == "" {
		return res, nil // the server answered at once after all
	}
	sess, err := r.pool.SessionFor(ctx, c.Server, c.SessionKey)
	if err != nil {
		return nil, err
	}
	task := created.Task
	r.log.Info("following an upstream task", "server", c.Server, "tool", c.Tool, "task", task.TaskID)
	if c.Promoter != nil && !c.PromoteAt.IsZero() {
		// callTool's timer, which would have told the promoter, is gone.
		t := time.AfterFunc(time.Until(c.PromoteAt), c.Promoter.Promote)
		defer t.Stop()
	}
	res, err = r.followTask(ctx, sess, &c, task)
	if err != nil && ctx.Err() != nil {
		// The call gave up: the server's task is cancelled too.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskCancelWait)
		defer cancel()
		p := &jsonrpc.Object{}
		p.Set("taskId", jsonrpc.Quote(task.TaskID))
		if _, cerr := sess.Call(cctx, "tasks/cancel", p); cerr != nil {
			r.log.Warn("cancelling an upstream task", "server", c.Server, "task", task.TaskID, "err", cerr)
		}
	}
	return res, err
}

// followTask polls task until it ends, passing its status messages on as
// progress, then fetches its result.
func (r *Relay) followTask(ctx context.Context, sess *upstream.Session, c *Call, task *upstreamTask) (json.RawMessage, error) {
	params := &jsonrpc.Object{}
	params.Set("taskId", jsonrpc.Quote(task.TaskID))
	steps, last := 0, ""
	for {
		if task.StatusMessage != "" && task.StatusMessage != last && c.Progress != nil && c.HostToken != nil {
			last = task.StatusMessage
			steps++
			c.Progress(jsonrpc.MustMarshal(struct {
				Token    json.RawMessage `json:"progressToken"`
				Progress int             `json:"progress"`
				Message  string          `json:"message"`
			}{c.HostToken, steps, task.StatusMessage}))
		}
		switch task.Status {
		case "completed", "failed", "cancelled", "input_required":
			// tasks/result waits for the end (and carries the server's
			// questions, which mcpx does not relay from a task yet).
			res, err := sess.Call(ctx, "tasks/result", params)
			if err != nil {
				return nil, err
			}
			return withoutRelatedTask(res), nil
		}
		t := time.NewTimer(task.poll())
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		}
		raw, err := sess.Call(ctx, "tasks/get", params)
		if err != nil {
			var rpcErr *jsonrpc.Error
			if errors.As(err, &rpcErr) {
				return nil, fmt.Errorf("upstream %q lost its task %s: %w", c.Server, task.TaskID, err)
			}
			return nil, err
		}
		next := &upstreamTask{}
		if err := json.Unmarshal(raw, next); err != nil || next.Status == "" {
			return nil, fmt.Errorf("upstream %q answered tasks/get for %s with no task", c.Server, task.TaskID)
		}
		task = next
	}
}

// withoutRelatedTask removes the related-task _meta of a task's result:
// the host asked for no task of the server's.
func withoutRelatedTask(res json.RawMessage) json.RawMessage {
	obj, err := jsonrpc.ParseObject(res)
	if err != nil || !obj.Has("_meta") {
		return res
	}
	mcp.EditMeta(obj, func(m *jsonrpc.Object) { m.Delete("io.modelcontextprotocol/related-task") })
	return obj.Bytes()
}
