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
// hostserver) hands it to the handler: its params, its answers, and the
// jobs of the host's principal as the host's policy lets it see them.
// The session decided who asks; the handler answers through the Request
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
	// Principal is whom the host's jobs belong to.
	Principal() string
	// ReadJob returns the host's job id if its policy lets it do op
	// (ReadJob, CancelJob) on it; a job it may not see reads as unknown.
	ReadJob(ctx context.Context, op principal.Op, id string) (*store.Job, error)
	// MayReadJob returns nil if the host may do op on its job id, else
	// the error ReadJob returns (it may read no job to know).
	MayReadJob(ctx context.Context, op principal.Op, id string) error
	// ListJobs returns up to limit of the host's jobs that it may see,
	// newest first.
	ListJobs(ctx context.Context, limit int) ([]*store.Job, error)
	// CancelJob cancels the host's job id, naming the host and why.
	CancelJob(ctx context.Context, id, why string) (*store.Job, error)
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
func taskJob(ctx context.Context, r Request, op principal.Op) *store.Job {
	id, rpcErr := taskID(r)
	if rpcErr != nil {
		r.Fail(rpcErr)
		return nil
	}
	j, err := r.ReadJob(ctx, op, id)
	if err != nil {
		r.Fail(TaskError(id, err))
		return nil
	}
	return j
}

// cancelTask cancels j's call, if it runs: the upstream call is cancelled
// with a cause naming why, and the job reads cancelled before this
// returns. It returns the job as it is then.
func cancelTask(ctx context.Context, r Request, j *store.Job, why string) (*store.Job, error) {
	if j.Status.Final() {
		return j, nil
	}
	return r.CancelJob(context.WithoutCancel(ctx), j.ID, why)
}
