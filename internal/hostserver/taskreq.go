package hostserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"mcpx/internal/hostjobs"
	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
	"mcpx/internal/store"
)

// A host's request for a task, of either era, and reading the job of the
// task a request names; a task as a view of its job is hostjobs'.

// taskRequest is what a task-augmented tools/call asked for.
type taskRequest struct {
	ttl time.Duration // granted
	// modern: a 2026-07-28 call, a task once it has run after.
	modern bool
	after  time.Duration
}

// taskParams reads params.task of a 2025-11-25 tools/call: nil when
// there is none. It removes the member: the upstream is called plainly.
func (s *Server) taskParams(params *jsonrpc.Object) (*taskRequest, *jsonrpc.Error) {
	raw, ok := params.Get("task")
	if !ok {
		return nil, nil
	}
	params.Delete("task")
	var t struct {
		TTL *float64 `json:"ttl"`
	}
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: task must be an object with an optional ttl in milliseconds")
	}
	maxTTL := s.tasks.MaxTTLGranted()
	tr := &taskRequest{ttl: maxTTL}
	if t.TTL != nil {
		if *t.TTL < 0 {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: task.ttl must be 0 or more milliseconds, not %g", *t.TTL)
		}
		tr.ttl = min(time.Duration(*t.TTL)*time.Millisecond, maxTTL)
	}
	return tr, nil
}

// taskID reads params.taskId.
func taskID(req *request) (string, *jsonrpc.Error) {
	raw, _ := req.params.Get("taskId")
	id, ok := jsonrpc.Unquote(raw)
	if !ok || id == "" {
		return "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: %s needs a taskId string", req.msg.Method)
	}
	return id, nil
}

// taskJob reads the job of the task req names, for op (ReadJob,
// CancelJob); when it cannot, it has answered the host, and returns nil.
func (hs *hostSession) taskJob(ctx context.Context, req *request, op principal.Op) *store.Job {
	id, rpcErr := taskID(req)
	if rpcErr != nil {
		fail(req.sink, req.msg.ID, rpcErr)
		return nil
	}
	j, err := hs.readJob(ctx, req, op, id)
	if err != nil {
		fail(req.sink, req.msg.ID, hostjobs.TaskError(id, err))
		return nil
	}
	return j
}

// cancelTask cancels j's call, if it runs: the upstream call is cancelled
// with a cause naming tasks/cancel, and the job reads cancelled before
// this returns. It returns the job as it is then.
func (hs *hostSession) cancelTask(ctx context.Context, req *request, j *store.Job) (*store.Job, error) {
	if j.Status.Final() {
		return j, nil
	}
	return hs.srv.opts.Jobs.CancelJob(context.WithoutCancel(ctx), hs.jobPrincipal(), j.ID, hs.who.WithClient(clientName(hs, req)), "the host's tasks/cancel")
}

// taskAsker is the Asker of a task's call.
type taskAsker struct {
	tasks *hostjobs.Tasks
	caps  json.RawMessage // the host's capabilities, of the call's request
	call  func() *jobs.Call
}

func (a *taskAsker) Can(method string, params json.RawMessage) bool {
	return declares(a.caps, method, params)
}

func (a *taskAsker) Notify(string, json.RawMessage) {}

// Ask keeps a legacy upstream's one request with the task until the host
// answers it.
func (a *taskAsker) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	answers, pass, err := a.AskInput(ctx, []string{"request"}, map[string]relay.InputRequest{"request": {Method: method, Params: params}})
	if err != nil {
		return nil, err
	}
	if pass {
		return nil, fmt.Errorf("the host can be asked %s only once the call is a task", method)
	}
	return answers["request"], nil
}

// AskInput keeps the requests with the task until the host has answered
// every one (hostjobs.Tasks.AskInput).
func (a *taskAsker) AskInput(ctx context.Context, keys []string, reqs map[string]relay.InputRequest) (map[string]json.RawMessage, bool, error) {
	return a.tasks.AskInput(ctx, a.call(), keys, reqs)
}
