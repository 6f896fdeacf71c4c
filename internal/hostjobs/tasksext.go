package hostjobs

import (
	"context"
	"encoding/json"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// The 2026-07-28 tasks extension's methods toward hosts: tasks/get with
// the result or error inlined, empty acks for tasks/update and
// tasks/cancel; hostserver gates them on the request naming the
// extension, and decides which call becomes a task.

// detailedOf is job j as the extension's DetailedTask. A tool result
// with isError is a completed task here (unlike 2025-11-25); failed is
// for calls that ended in a JSON-RPC error (its code kept), or that a
// stop of mcpx interrupted.
func (t *Tasks) detailedOf(r Request, j *store.Job) Detailed {
	tk := t.Of(j)
	d := Detailed{ResultType: mcp.ResultTypeComplete, TaskID: tk.TaskID, Status: tk.Status, StatusMessage: tk.StatusMessage,
		CreatedAt: tk.CreatedAt, LastUpdatedAt: tk.LastUpdatedAt, TTLMs: tk.TTL, PollIntervalMs: tk.PollInterval}
	switch j.Status {
	case store.Running:
		if q := t.Pending(j.ID); q != nil {
			d.Status, d.InputRequests = mcp.TaskInputRequired, q
		}
	case store.Completed:
		d.Status, d.StatusMessage = mcp.TaskCompleted, LateMessage(j)
		d.Result = r.ToolResult(j.Result)
	case store.Failed:
		d.Error = Failure(j)
	case store.Interrupted:
		d.Error = WithLate(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "interrupted: " + j.Error}, j)
	}
	return d
}

// ExtGet serves the extension's tasks/get.
func (t *Tasks) ExtGet(ctx context.Context, r Request, a Asking) {
	if j := taskJob(ctx, r, a, principal.ReadJob); j != nil {
		r.Reply(jsonrpc.MustMarshal(t.detailedOf(r, j)))
	}
}

// ExtCancel serves the extension's tasks/cancel: it cancels a running
// task and acknowledges with an empty result; a task that has ended is
// acknowledged alike (the cancel is idempotent), an unknown or foreign
// id is -32602.
func (t *Tasks) ExtCancel(ctx context.Context, r Request, a Asking) {
	j := taskJob(ctx, r, a, principal.CancelJob)
	if j == nil {
		return
	}
	if _, err := cancelTask(ctx, a, j, "the host's tasks/cancel"); err != nil {
		r.Fail(TaskError(j.ID, err))
		return
	}
	r.Reply(json.RawMessage(mcp.CompleteResult))
}

// ExtUpdate serves tasks/update: it hands a task's call the host's
// answers to its outstanding questions, and acknowledges; answers to
// questions that are not outstanding are ignored, as the extension says.
func (t *Tasks) ExtUpdate(ctx context.Context, r Request, a Asking) {
	if _, rpcErr := taskID(r); rpcErr != nil {
		r.Fail(rpcErr)
		return
	}
	raw, ok := r.Params().Get("inputResponses")
	var responses map[string]json.RawMessage
	if !ok || json.Unmarshal(raw, &responses) != nil || responses == nil {
		r.Fail(jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: tasks/update needs an inputResponses object"))
		return
	}
	j := taskJob(ctx, r, a, principal.ReadJob)
	if j == nil {
		return
	}
	t.Answer(j.ID, responses)
	r.Reply(json.RawMessage(mcp.CompleteResult))
}
