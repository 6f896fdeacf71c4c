package hostjobs

import (
	"context"
	"encoding/json"

	"mcpx/internal/hostprofile"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// Request is a host's request to a tasks method (tasks2025.go,
// tasksext.go) or a job meta-tool (jobmeta.go), as its session (package
// hostserver) hands it to the handler, with who asks (Asking): its
// params, and its answers. The session decided who asks; the handler
// decides with Asking what they may do, and answers through the Request
// once.
type Request interface {
	// Params are the request's params; Method its method.
	Params() *jsonrpc.Object
	Method() string
	// Reply answers with result as it is; ReplyJSON with v marshalled.
	Reply(result json.RawMessage)
	ReplyJSON(v any)
	// ReplyToolError answers with a tool error, text saying why.
	ReplyToolError(text string)
	// Fail answers with err.
	Fail(err *jsonrpc.Error)
	// End finishes a request whose wait failed: nothing for a host
	// that cancelled or left, else the error err says.
	End(err error)
	// ToolResult is a tool's result res as the host's revision reads it.
	ToolResult(res json.RawMessage) json.RawMessage
	// Asker puts questions on the request's own stream, nil when it
	// carries no requests of mcpx's.
	Asker() Asker
	// HostProfile is the profile of the host behind the request.
	HostProfile() hostprofile.Profile
}

// taskID reads params.taskId.
func taskID(r Request) (string, *jsonrpc.Error) {
	raw, _ := r.Params().Get("taskId")
	id, ok := jsonrpc.Unquote(raw)
	if !ok || id == "" {
		return "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: %s needs a taskId string", r.Method())
	}
	return id, nil
}

// taskJob reads the job of the task r names, for op (ReadJob,
// CancelJob); when it cannot, it has answered the host, and returns nil.
func taskJob(ctx context.Context, r Request, a Asking, op principal.Op) *store.Job {
	id, rpcErr := taskID(r)
	if rpcErr != nil {
		r.Fail(rpcErr)
		return nil
	}
	j, err := a.Read(ctx, op, id)
	if err != nil {
		r.Fail(TaskError(id, err))
		return nil
	}
	return j
}

// cancelTask cancels j's call, if it runs: the upstream call is cancelled
// with a cause naming why, and the job reads cancelled before this
// returns. It returns the job as it is then.
func cancelTask(ctx context.Context, a Asking, j *store.Job, why string) (*store.Job, error) {
	if j.Status.Final() {
		return j, nil
	}
	return a.Cancel(context.WithoutCancel(ctx), j.ID, why)
}
