package hostserver

import (
	"context"
	"encoding/json"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/hostjobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// The 2026-07-28 tasks extension toward hosts. A host that names the
// extension in a request's clientCapabilities (per request: there is no
// session) may get a task for a tools/call: mcpx decides, making one of
// a call still running after mcpx.jobs.taskAfter, and answering at once a
// call that ends sooner. The task is the call's job, as for 2025-11-25;
// only the wire differs: a flat CreateTaskResult, tasks/get with the
// result or error inlined, empty acks for tasks/update and tasks/cancel,
// no tasks/result and no tasks/list.

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

// detailedOf is job j as the extension's DetailedTask. A tool result
// with isError is a completed task here (unlike 2025-11-25); failed is
// for calls that ended in a JSON-RPC error (its code kept), or that a
// stop of mcpx interrupted.
func (hs *hostSession) detailedOf(req *request, j *store.Job) hostjobs.Detailed {
	t := hs.srv.tasks.Of(j)
	d := hostjobs.Detailed{ResultType: mcp.ResultTypeComplete, TaskID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt, TTLMs: t.TTL, PollIntervalMs: t.PollInterval}
	switch j.Status {
	case store.Running:
		if q := hs.srv.tasks.Pending(j.ID); q != nil {
			d.Status, d.InputRequests = mcp.TaskInputRequired, q
		}
	case store.Completed:
		d.Status, d.StatusMessage = mcp.TaskCompleted, hostjobs.LateMessage(j)
		d.Result = hs.toolResult(req, j.Result)
	case store.Failed:
		d.Error = hostjobs.Failure(j)
	case store.Interrupted:
		d.Error = hostjobs.WithLate(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "interrupted: " + j.Error}, j)
	}
	return d
}

// modernTaskHandler returns the handler of a 2026-07-28 tasks method,
// gated on the request naming the extension; nil for a method the
// extension does not have (tasks/result and tasks/list are 2025-11-25's).
func modernTaskHandler(method string) handler {
	var h handler
	switch method {
	case mcp.MethodTasksGet:
		h = (*hostSession).extTasksGet
	case mcp.MethodTasksUpdate:
		h = (*hostSession).extTasksUpdate
	case mcp.MethodTasksCancel:
		h = (*hostSession).extTasksCancel
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

func (hs *hostSession) extTasksGet(ctx context.Context, req *request) {
	if j := hs.taskJob(ctx, req, principal.ReadJob); j != nil {
		reply(req.sink, req.msg.ID, jsonrpc.MustMarshal(hs.detailedOf(req, j)))
	}
}

// extTasksCancel cancels a running task and acknowledges with an empty
// result; a task that has ended is acknowledged alike (the cancel is
// idempotent), an unknown or foreign id is -32602.
func (hs *hostSession) extTasksCancel(ctx context.Context, req *request) {
	j := hs.taskJob(ctx, req, principal.CancelJob)
	if j == nil {
		return
	}
	if _, err := hs.cancelTask(ctx, req, j); err != nil {
		fail(req.sink, req.msg.ID, hostjobs.TaskError(j.ID, err))
		return
	}
	reply(req.sink, req.msg.ID, json.RawMessage(`{"resultType":"complete"}`))
}

// extTasksUpdate hands a task's call the host's answers to its
// outstanding questions, and acknowledges; answers to questions that are
// not outstanding are ignored, as the extension says.
func (hs *hostSession) extTasksUpdate(ctx context.Context, req *request) {
	if _, rpcErr := taskID(req); rpcErr != nil {
		fail(req.sink, req.msg.ID, rpcErr)
		return
	}
	raw, ok := req.params.Get("inputResponses")
	var responses map[string]json.RawMessage
	if !ok || json.Unmarshal(raw, &responses) != nil || responses == nil {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: tasks/update needs an inputResponses object"))
		return
	}
	j := hs.taskJob(ctx, req, principal.ReadJob)
	if j == nil {
		return
	}
	hs.srv.tasks.Answer(j.ID, responses)
	reply(req.sink, req.msg.ID, json.RawMessage(`{"resultType":"complete"}`))
}
