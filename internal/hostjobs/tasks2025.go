package hostjobs

import (
	"context"
	"errors"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// MCP tasks of the 2025-11-25 revision, toward hosts: tasks/get,
// tasks/result (which waits, and carries the task's questions to the
// host), tasks/list and tasks/cancel; hostserver registers them, answers
// a task-augmented tools/call and tells a host of a task that ended.

// tasksPageSize is how many tasks a tasks/list page holds.
const tasksPageSize = 100

// Get serves tasks/get.
func (t *Tasks) Get(ctx context.Context, r Request, a Asking) {
	if j := taskJob(ctx, r, a, principal.ReadJob); j != nil {
		r.ReplyJSON(t.Of(j))
	}
}

// errAsked ends a tasks/result's wait for its task: a question came.
var errAsked = errors.New("the task asked its host something")

// Result serves tasks/result: it waits for the task to end, as the
// revision says, putting the questions its call asks meanwhile to the
// host on this request's stream; then answers what the call would have:
// its tool result, tagged with the task, or the JSON-RPC error it failed
// with.
func (t *Tasks) Result(ctx context.Context, r Request, a Asking) {
	j := taskJob(ctx, r, a, principal.ReadJob)
	if j == nil {
		return
	}
	id, m := j.ID, t.Jobs
	asker := r.Asker()
	for !j.Status.Final() {
		asked := t.Asked()
		if asker != nil && t.AskQuestions(ctx, id, asker) {
			asked = nil // answered: read the task again at once
		}
		wctx, cancel := context.WithCancelCause(ctx)
		stop := make(chan struct{})
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			select {
			case <-asked:
				cancel(errAsked)
			case <-stop:
			}
		}()
		wait := time.Hour
		if asked == nil {
			wait = 0
		}
		var err error
		j, err = m.Wait(wctx, a.Owner, id, wait)
		close(stop)
		<-watched
		cancel(nil)
		switch {
		case ctx.Err() != nil:
			r.End(context.Cause(ctx))
			return
		case err != nil && errors.Is(context.Cause(wctx), errAsked):
			j, err = m.Get(ctx, a.Owner, id)
		}
		if err != nil {
			r.Fail(TaskError(id, err))
			return
		}
	}
	if j.Status != store.Completed {
		r.Fail(Failure(j))
		return
	}
	res, perr := jsonrpc.ParseObject(j.Result)
	if perr != nil {
		r.Fail(jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error: task %q: its stored result is not an object", id))
		return
	}
	mcp.EditMeta(res, func(meta *jsonrpc.Object) {
		meta.Set(mcp.MetaRelatedTask, jsonrpc.MustMarshal(map[string]string{"taskId": id}))
	})
	r.Reply(r.ToolResult(res.Bytes()))
}

// List serves tasks/list: the principal's own tasks (its jobs) that the
// host may see, newest first, a page at a time.
func (t *Tasks) List(ctx context.Context, r Request, a Asking) {
	from := 0
	if raw, ok := r.Params().Get("cursor"); ok && string(raw) != "null" {
		c, _ := jsonrpc.Unquote(raw)
		n, err := DecodeCursor(c)
		if err != nil {
			r.Fail(jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: unknown cursor"))
			return
		}
		from = n
	}
	all, err := a.List(ctx, from+tasksPageSize+1)
	if err != nil {
		r.Fail(jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error: listing tasks: %v", err))
		return
	}
	out := struct {
		Tasks      []Task `json:"tasks"`
		NextCursor string `json:"nextCursor,omitempty"`
	}{Tasks: []Task{}}
	for i := from; i < len(all) && i < from+tasksPageSize; i++ {
		out.Tasks = append(out.Tasks, t.Of(all[i]))
	}
	if len(all) > from+tasksPageSize {
		out.NextCursor = EncodeCursor(from + tasksPageSize)
	}
	r.ReplyJSON(out)
}

// Cancel serves tasks/cancel: it cancels a running task, which reads
// cancelled in the answer; an ended task is refused with -32602, as the
// revision says.
func (t *Tasks) Cancel(ctx context.Context, r Request, a Asking) {
	j := taskJob(ctx, r, a, principal.CancelJob)
	if j == nil {
		return
	}
	if j.Status.Final() {
		r.Fail(jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: task %q has ended (%s): it cannot be cancelled", j.ID, t.Of(j).Status))
		return
	}
	id := j.ID
	j, err := cancelTask(ctx, a, j, "the host's tasks/cancel")
	if err != nil {
		r.Fail(TaskError(id, err))
		return
	}
	r.ReplyJSON(t.Of(j))
}
