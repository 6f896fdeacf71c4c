package hostserver

import (
	"context"
	"errors"
	"time"

	"mcpx/internal/hostjobs"
	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// MCP tasks of the 2025-11-25 revision, toward hosts: a task-augmented
// tools/call, tasks/get, tasks/result (which waits, and carries the
// task's questions to the host), tasks/list, tasks/cancel, and
// notifications/tasks/status when a task ends.

// tasksPageSize is how many tasks a tasks/list page holds.
const tasksPageSize = 100

// legacyTasks reports whether a legacy host of version gets tasks: mcpx
// keeps jobs, and the host speaks the revision tasks came with.
func (s *Server) legacyTasks(version string) bool {
	return s.opts.Jobs != nil && version == mcp.Version20251125
}

var taskHandlers = map[string]handler{
	mcp.MethodTasksGet:    (*hostSession).tasksGet,
	mcp.MethodTasksResult: (*hostSession).tasksResult,
	mcp.MethodTasksList:   (*hostSession).tasksList,
	mcp.MethodTasksCancel: (*hostSession).tasksCancel,
}

// replyTask answers a task-augmented tools/call, of either era, with the
// job it started; a 2025-11-25 host is told when the task ends.
func (hs *hostSession) replyTask(req *request, c *jobs.Call, id string) {
	now := time.Now()
	t := hs.srv.tasks.Of(&store.Job{ID: id, Status: store.Running, Created: c.Start, Updated: now,
		Params: hostjobs.WithGrantedTTL([]byte(`{}`), req.task.ttl)})
	if req.task.modern {
		// Flat, resultType task; written as is (req.result would make
		// its resultType complete).
		reply(req.sink, req.msg.ID, jsonrpc.MustMarshal(hostjobs.Detailed{ResultType: mcp.ResultTypeTask, TaskID: t.TaskID, Status: t.Status,
			CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt, TTLMs: t.TTL, PollIntervalMs: t.PollInterval}))
		return
	}
	hs.replyJSON(req, struct {
		Task hostjobs.Task `json:"task"`
	}{t})
	// 2025-11-25 only: the extension's notifications/tasks go to a
	// subscriptions/listen that names the task, which mcpx does not
	// serve yet.
	c.AfterEnd(func() { hs.taskEnded(id) })
}

// taskEnded sends notifications/tasks/status for a task that ended, to
// the host's stream (stdio) or its legacy HTTP session's GET stream, if
// it has one open; the host still polls for it otherwise.
func (hs *hostSession) taskEnded(id string) {
	out := sink(nil)
	if hs.out != nil {
		out = hs.out
	} else {
		out = hs.srv.streamOf(hs)
	}
	if out == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	j, err := hs.srv.opts.Jobs.Get(ctx, hs.jobPrincipal(), id)
	if err != nil {
		return
	}
	out.pushWhile(nil, jsonrpc.NewNotification(mcp.MethodTaskStatus, jsonrpc.MustMarshal(hs.srv.tasks.Of(j))).Encode())
}

func (hs *hostSession) tasksGet(ctx context.Context, req *request) {
	if j := hs.taskJob(ctx, req, principal.ReadJob); j != nil {
		hs.replyJSON(req, hs.srv.tasks.Of(j))
	}
}

// errAsked ends a tasks/result's wait for its task: a question came.
var errAsked = errors.New("the task asked its host something")

// tasksResult waits for the task to end, as the revision says, putting
// the questions its call asks meanwhile to the host on this request's
// stream; then answers what the call would have: its tool result,
// tagged with the task, or the JSON-RPC error it failed with.
func (hs *hostSession) tasksResult(ctx context.Context, req *request) {
	j := hs.taskJob(ctx, req, principal.ReadJob)
	if j == nil {
		return
	}
	id, m := j.ID, hs.srv.opts.Jobs
	var asker *hostAsker
	if req.sink.carriesRequests() {
		asker = &hostAsker{hs: hs, sink: req.sink, caps: req.caps}
	}
	for !j.Status.Final() {
		asked := hs.srv.tasks.Asked()
		if asker != nil && hs.srv.tasks.AskQuestions(ctx, id, asker) {
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
		j, err = m.Wait(wctx, hs.jobPrincipal(), id, wait)
		close(stop)
		<-watched
		cancel(nil)
		switch {
		case ctx.Err() != nil:
			hs.end(req, context.Cause(ctx))
			return
		case err != nil && errors.Is(context.Cause(wctx), errAsked):
			j, err = m.Get(ctx, hs.jobPrincipal(), id)
		}
		if err != nil {
			fail(req.sink, req.msg.ID, hostjobs.TaskError(id, err))
			return
		}
	}
	if j.Status != store.Completed {
		fail(req.sink, req.msg.ID, hostjobs.Failure(j))
		return
	}
	res, perr := jsonrpc.ParseObject(j.Result)
	if perr != nil {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error: task %q: its stored result is not an object", id))
		return
	}
	mcp.EditMeta(res, func(meta *jsonrpc.Object) {
		meta.Set(mcp.MetaRelatedTask, jsonrpc.MustMarshal(map[string]string{"taskId": id}))
	})
	reply(req.sink, req.msg.ID, hs.toolResult(req, res.Bytes()))
}

// tasksList lists the principal's own tasks (its jobs) that the host may
// see (policyjobs.go), newest first, a page at a time.
func (hs *hostSession) tasksList(ctx context.Context, req *request) {
	from := 0
	if raw, ok := req.params.Get("cursor"); ok && string(raw) != "null" {
		c, _ := jsonrpc.Unquote(raw)
		n, err := hostjobs.DecodeCursor(c)
		if err != nil {
			fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: unknown cursor"))
			return
		}
		from = n
	}
	all, err := hs.listJobs(ctx, req, from+tasksPageSize+1)
	if err != nil {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error: listing tasks: %v", err))
		return
	}
	out := struct {
		Tasks      []hostjobs.Task `json:"tasks"`
		NextCursor string          `json:"nextCursor,omitempty"`
	}{Tasks: []hostjobs.Task{}}
	for i := from; i < len(all) && i < from+tasksPageSize; i++ {
		out.Tasks = append(out.Tasks, hs.srv.tasks.Of(all[i]))
	}
	if len(all) > from+tasksPageSize {
		out.NextCursor = hostjobs.EncodeCursor(from + tasksPageSize)
	}
	hs.replyJSON(req, out)
}

// tasksCancel cancels a running task, which reads cancelled in the
// answer; an ended task is refused with -32602, as the revision says.
func (hs *hostSession) tasksCancel(ctx context.Context, req *request) {
	j := hs.taskJob(ctx, req, principal.CancelJob)
	if j == nil {
		return
	}
	if j.Status.Final() {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: task %q has ended (%s): it cannot be cancelled", j.ID, hs.srv.tasks.Of(j).Status))
		return
	}
	id := j.ID
	j, err := hs.cancelTask(ctx, req, j)
	if err != nil {
		fail(req.sink, req.msg.ID, hostjobs.TaskError(id, err))
		return
	}
	hs.replyJSON(req, hs.srv.tasks.Of(j))
}
