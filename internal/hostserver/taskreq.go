package hostserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"mcpx/internal/hostjobs"
	"mcpx/internal/hostprofile"
	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/relay"
)

// A host's request for a task, of either era, and a request as the
// handlers of tasks methods (hostjobs') see it; a task as a view of its
// job is hostjobs'.

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

// A request is the hostjobs.Request of the handlers of tasks methods and
// of the job meta-tools (hostjobs'): no allocation of its own.

// session is the request's session, kept in its asker's storage (set as
// the request is made, and the same when asker fills it): a field of its
// own would take every request to the next size class (64 bytes more a
// call: BenchmarkRelayCall, B/op, in internal/hostserver).
func (req *request) session() *hostSession { return req.asker.hs }

// tasksHandler is the handler of a tasks method that hostjobs serves.
func tasksHandler(h func(*hostjobs.Tasks, context.Context, hostjobs.Request, hostjobs.Asking)) handler {
	return func(hs *hostSession, ctx context.Context, req *request) {
		h(&hs.srv.tasks, ctx, req, req.asking())
	}
}

func (req *request) Method() string                   { return req.msg.Method }
func (req *request) Reply(result json.RawMessage)     { reply(req.sink, req.msg.ID, result) }
func (req *request) ReplyJSON(v any)                  { req.session().replyJSON(req, v) }
func (req *request) Fail(err *jsonrpc.Error)          { fail(req.sink, req.msg.ID, err) }
func (req *request) End(err error)                    { req.session().end(req, err) }
func (req *request) ReplyToolError(text string)       { req.session().replyToolError(req, text) }
func (req *request) HostProfile() hostprofile.Profile { return req.session().hostProfile(req) }
func (req *request) ToolResult(res json.RawMessage) json.RawMessage {
	return req.session().toolResult(req, res)
}

// Asker is the request's own stream's, nil when it carries no requests.
func (req *request) Asker() hostjobs.Asker {
	if !req.sink.carriesRequests() {
		return nil
	}
	return &hostAsker{hs: req.session(), sink: req.sink, caps: req.caps}
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
