package hostserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// MCP tasks toward hosts, of both eras: the 2025-11-25 tasks
// (tasks2025.go) and the 2026-07-28 extension (tasksext.go). Every task
// is a job: a task's call is a background call (relayAsJob) whose answer
// is a CreateTaskResult instead of a tool result, and the task id is the
// job id, so tasks are kept, bound to their principal, listed and
// recovered after a restart as jobs are. What both eras share is here:
// the request for a task, the job as a task, and reading a task's job.

// Task defaults.
const (
	DefaultTaskPollInterval = time.Second
	tasksPageSize           = 100
)

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
	maxTTL := s.taskMaxTTL()
	tr := &taskRequest{ttl: maxTTL}
	if t.TTL != nil {
		if *t.TTL < 0 {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: task.ttl must be 0 or more milliseconds, not %g", *t.TTL)
		}
		tr.ttl = min(time.Duration(*t.TTL)*time.Millisecond, maxTTL)
	}
	return tr, nil
}

// taskMaxTTL is the longest ttl a task is granted: the configured bound,
// never longer than the jobs' retention (a task's result is kept that
// long after it ends, so at least its ttl from its creation).
func (s *Server) taskMaxTTL() time.Duration {
	ret := s.opts.Jobs.Retention()
	if t := s.opts.TaskMaxTTL; t > 0 && t < ret {
		return t
	}
	return ret
}

func (s *Server) taskPollInterval() time.Duration {
	if s.opts.TaskPollInterval > 0 {
		return s.opts.TaskPollInterval
	}
	return DefaultTaskPollInterval
}

// withGrantedTTL returns the params a task's job keeps: the call's, with
// task.ttl the ttl granted, so that the job's row says it after a
// restart (RelayRunner drops the member before running the call again).
func withGrantedTTL(params json.RawMessage, ttl time.Duration) json.RawMessage {
	obj, err := jsonrpc.ParseObject(params)
	if err != nil {
		return params
	}
	obj.Set("task", jsonrpc.MustMarshal(struct {
		TTL int64 `json:"ttl"`
	}{ttl.Milliseconds()}))
	return obj.Bytes()
}

// grantedTTL is the ttl a task's job keeps (withGrantedTTL); the bound
// for a job that keeps none.
func (s *Server) grantedTTL(j *store.Job) time.Duration {
	if bytes.Contains(j.Params, []byte(`"task"`)) {
		var p struct {
			Task struct {
				TTL *int64 `json:"ttl"`
			} `json:"task"`
		}
		if json.Unmarshal(j.Params, &p) == nil && p.Task.TTL != nil {
			return time.Duration(*p.Task.TTL) * time.Millisecond
		}
	}
	return s.taskMaxTTL()
}

// taskJSON is a 2025-11-25 Task; the extension's DetailedTask is made
// from it (detailedOf).
type taskJSON struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

// taskOf is job j as a task: a running job whose call waits for its
// host's answers is input_required.
func (s *Server) taskOf(j *store.Job) taskJSON {
	t := taskJSON{
		TaskID: j.ID, CreatedAt: rfc3339(j.Created), LastUpdatedAt: rfc3339(j.Updated),
		TTL: s.grantedTTL(j).Milliseconds(),
	}
	if t.LastUpdatedAt == "" {
		t.LastUpdatedAt = t.CreatedAt
	}
	switch j.Status {
	case store.Running:
		t.Status, t.PollInterval = mcp.TaskWorking, s.taskPollInterval().Milliseconds()
		if len(j.Progress) > 0 {
			var p jobs.Progress
			if json.Unmarshal(j.Progress, &p) == nil {
				t.StatusMessage = progressText(&p)
			}
		}
		if s.pendingOf(j.ID) != nil {
			t.Status = mcp.TaskInputRequired
		}
	case store.Completed:
		t.Status = mcp.TaskCompleted
		if toolFailed(j.Result) {
			// A tool result with isError is a failed task in 2025-11-25.
			t.Status, t.StatusMessage = mcp.TaskFailed, "the tool reported an error: tasks/result has it"
		}
	case store.Failed:
		t.Status, t.StatusMessage = mcp.TaskFailed, j.Error
	case store.Cancelled:
		t.Status, t.StatusMessage = mcp.TaskCancelled, j.Error
	case store.Interrupted:
		t.Status, t.StatusMessage = mcp.TaskFailed, "interrupted: "+j.Error
	default:
		t.Status, t.StatusMessage = mcp.TaskFailed, "mcpx does not know the job status "+string(j.Status)
	}
	if j.Status.Final() {
		t.StatusMessage = withLateMessage(t.StatusMessage, j)
	}
	return t
}

// failure is the JSON-RPC error an ended task that has no result answers
// with: a failed call's own (its code kept in the job's row), else one
// saying how the task ended; either tells of its late end (withLate).
func failure(j *store.Job) *jsonrpc.Error { return withLate(failureOf(j), j) }

func failureOf(j *store.Job) *jsonrpc.Error {
	switch j.Status {
	case store.Failed:
		var e jsonrpc.Error
		if json.Unmarshal(j.Result, &e) == nil && e.Code != 0 {
			return &e
		}
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "task %q failed: %s", j.ID, j.Error)
	case store.Cancelled:
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "task %q was cancelled: %s", j.ID, j.Error)
	case store.Interrupted:
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "task %q was interrupted: %s", j.ID, j.Error)
	}
	return jsonrpc.Errorf(jsonrpc.CodeInternalError, "task %q ended %s", j.ID, j.Status)
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// toolFailed reports whether a tool result says isError: true.
func toolFailed(res []byte) bool {
	if !bytes.Contains(res, []byte("isError")) {
		return false
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(res, &r) == nil && r.IsError
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

// taskError is the answer to a task method whose job could not be read:
// -32602 for an unknown, foreign or expired id, saying which.
func taskError(id string, err error) *jsonrpc.Error {
	if jobs.IsIDError(err) {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: task %q: %v", id, errors.Unwrap(err))
	}
	return jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error: reading task %q: %v", id, err)
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
		fail(req.sink, req.msg.ID, taskError(id, err))
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

// withTaskSupport returns a tool's JSON with execution.taskSupport
// "optional" (mcpx runs any tool as a task), unless the tool says
// "required" itself.
func withTaskSupport(raw json.RawMessage) json.RawMessage {
	obj, err := jsonrpc.ParseObject(raw)
	if err != nil {
		return raw
	}
	exec := &jsonrpc.Object{}
	if e, ok := obj.Get("execution"); ok {
		if parsed, err := jsonrpc.ParseObject(e); err == nil {
			exec = parsed
		}
	}
	if ts, ok := exec.Get("taskSupport"); ok && string(ts) == `"required"` {
		return raw
	}
	exec.Set("taskSupport", json.RawMessage(`"optional"`))
	obj.SetObject("execution", exec)
	return obj.Bytes()
}

// isMetaTool reports whether name is one of mcpx's own tools, which run
// only as plain calls.
func isMetaTool(name string) bool {
	switch name {
	case "mcpx_search", "mcpx_call", "mcpx_job", "mcpx_job_cancel", "mcpx_exec", "mcpx_describe":
		return true
	}
	return false
}
