package hostserver

import (
	"context"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/hostjobs"
	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// MCP tasks toward hosts, of the 2025-11-25 revision and of the
// 2026-07-28 extension: a task-augmented tools/call, and
// notifications/tasks/status when a 2025-11-25 task ends; the tasks
// methods are hostjobs' (tasks2025.go, tasksext.go there), registered
// here.

// legacyTasks reports whether a legacy host of version gets tasks: mcpx
// keeps jobs, and the host speaks the revision tasks came with.
func (s *Server) legacyTasks(version string) bool {
	return s.opts.Jobs != nil && version == mcp.Version20251125
}

var taskHandlers = map[string]handler{
	mcp.MethodTasksGet:    tasksHandler((*hostjobs.Tasks).Get),
	mcp.MethodTasksResult: tasksHandler((*hostjobs.Tasks).Result),
	mcp.MethodTasksList:   tasksHandler((*hostjobs.Tasks).List),
	mcp.MethodTasksCancel: tasksHandler((*hostjobs.Tasks).Cancel),
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

// The 2026-07-28 tasks extension toward hosts. A host that names the
// extension in a request's clientCapabilities (per request: there is no
// session) may get a task for a tools/call: mcpx decides, making one of
// a call still running after mcpx.jobs.taskAfter, and answering at once a
// call that ends sooner. The task is the call's job, as for 2025-11-25;
// only the wire differs: a flat CreateTaskResult, tasks/get with the
// result or error inlined, empty acks for tasks/update and tasks/cancel
// (hostjobs' tasksext.go), no tasks/result and no tasks/list.

// taskSupport returns how server's tool runs as a task, per the config.
func (s *Server) taskSupport(server, tool string) string {
	if cfg := s.relay.Config(); cfg != nil {
		if srv := cfg.Servers[server]; srv != nil {
			return srv.TaskSupport(tool)
		}
	}
	return config.TaskOptional
}

// taskAfter is how long a 2026-07-28 call runs before it becomes a task.
func (s *Server) taskAfter() time.Duration {
	if cfg := s.relay.Config(); cfg != nil {
		return cfg.Jobs.TaskAfter
	}
	return config.DefaultTaskAfter
}

// modernTaskCall settles how a 2026-07-28 tools/call of server's tool
// runs: as a task once it has run taskAfter, if the host takes tasks and
// the tool may be one; refused with -32021 if the tool must be one and
// the host takes none. A 2025-11-25 task member is tolerated, and
// ignored.
func (hs *hostSession) modernTaskCall(req *request, server, tool string) *jsonrpc.Error {
	req.params.Delete("task")
	ts := hs.srv.taskSupport(server, tool)
	takes := hostjobs.TakesTasks(req.caps)
	if takes && ts != config.TaskForbidden {
		// A person who may start no task: a plain call, refused only
		// for a tool that runs only as a task.
		if err := hs.toolFilter(req).pol.Decide(principal.StartJob, principal.Target{Server: server, Tool: tool}); err != nil {
			if ts == config.TaskRequired {
				return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s", err.Error())
			}
			return nil
		}
	}
	switch {
	case ts == config.TaskRequired && !takes:
		return hostjobs.NeedsTasks("the tool " + tool + ", which runs only as a task,")
	case takes && ts != config.TaskForbidden:
		req.task = &taskRequest{ttl: hs.srv.tasks.MaxTTLGranted(), modern: true, after: hs.srv.taskAfter()}
	}
	return nil
}

// modernTaskHandler returns the handler of a 2026-07-28 tasks method,
// gated on the request naming the extension; nil for a method the
// extension does not have (tasks/result and tasks/list are 2025-11-25's).
func modernTaskHandler(method string) handler {
	var h handler
	switch method {
	case mcp.MethodTasksGet:
		h = tasksHandler((*hostjobs.Tasks).ExtGet)
	case mcp.MethodTasksUpdate:
		h = tasksHandler((*hostjobs.Tasks).ExtUpdate)
	case mcp.MethodTasksCancel:
		h = tasksHandler((*hostjobs.Tasks).ExtCancel)
	default:
		return nil
	}
	return func(hs *hostSession, ctx context.Context, req *request) {
		if !hostjobs.TakesTasks(req.caps) {
			fail(req.sink, req.msg.ID, hostjobs.NeedsTasks(req.msg.Method))
			return
		}
		h(hs, ctx, req)
	}
}
