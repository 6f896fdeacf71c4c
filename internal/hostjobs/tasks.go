package hostjobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/store"
)

// MCP tasks toward hosts, of both eras: the 2025-11-25 tasks
// (tasks2025.go) and the 2026-07-28 extension (tasksext.go), a
// task-augmented call made one in hostserver (tasks.go). Every task is a job: a task's call is a
// background call whose answer is a CreateTaskResult instead of a tool
// result, and the task id is the job id, so tasks are kept, bound to
// their principal, listed and recovered after a restart as jobs are.
// What both eras share is here: a job as a task, its bounds, and the
// questions a task keeps for its host (inputs.go).

// DefaultTaskPollInterval is the poll interval tasks suggest when none is
// configured.
const DefaultTaskPollInterval = time.Second

// Tasks is what a server's sessions share of their tasks: the bounds
// tasks are granted, and the questions of live tasks. Its zero value
// holds no questions; it is safe for concurrent use.
type Tasks struct {
	// Jobs are the jobs tasks are views of; MaxTTL bounds the ttl a
	// task is granted (0, or longer than the jobs' retention: the
	// retention); PollInterval is the poll interval tasks suggest (0:
	// DefaultTaskPollInterval). Set before first use.
	Jobs         *jobs.Manager
	MaxTTL       time.Duration
	PollInterval time.Duration

	// inputs holds the questions of live tasks (task id to *taskInput,
	// inputs.go); asked fires when one is asked.
	inputs sync.Map
	asked  signal
}

// MaxTTLGranted is the longest ttl a task is granted: the configured
// bound, never longer than the jobs' retention (a task's result is kept
// that long after it ends, so at least its ttl from its creation).
func (t *Tasks) MaxTTLGranted() time.Duration {
	ret := t.Jobs.Retention()
	if m := t.MaxTTL; m > 0 && m < ret {
		return m
	}
	return ret
}

// Poll is the poll interval tasks suggest.
func (t *Tasks) Poll() time.Duration {
	if t.PollInterval > 0 {
		return t.PollInterval
	}
	return DefaultTaskPollInterval
}

// WithGrantedTTL returns the params a task's job keeps: the call's, with
// task.ttl the ttl granted, so that the job's row says it after a
// restart (RelayRunner drops the member before running the call again).
func WithGrantedTTL(params json.RawMessage, ttl time.Duration) json.RawMessage {
	obj, err := jsonrpc.ParseObject(params)
	if err != nil {
		return params
	}
	obj.Set("task", jsonrpc.MustMarshal(struct {
		TTL int64 `json:"ttl"`
	}{ttl.Milliseconds()}))
	return obj.Bytes()
}

// GrantedTTL is the ttl a task's job keeps (WithGrantedTTL); the bound
// for a job that keeps none.
func (t *Tasks) GrantedTTL(j *store.Job) time.Duration {
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
	return t.MaxTTLGranted()
}

// Task is a 2025-11-25 Task; the extension's DetailedTask is made
// from it (detailedOf).
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

// Of is job j as a task: a running job whose call waits for its
// host's answers is input_required.
func (ts *Tasks) Of(j *store.Job) Task {
	t := Task{
		TaskID: j.ID, CreatedAt: rfc3339(j.Created), LastUpdatedAt: rfc3339(j.Updated),
		TTL: ts.GrantedTTL(j).Milliseconds(),
	}
	if t.LastUpdatedAt == "" {
		t.LastUpdatedAt = t.CreatedAt
	}
	switch j.Status {
	case store.Running:
		t.Status, t.PollInterval = mcp.TaskWorking, ts.Poll().Milliseconds()
		if len(j.Progress) > 0 {
			var p jobs.Progress
			if json.Unmarshal(j.Progress, &p) == nil {
				t.StatusMessage = ProgressText(&p)
			}
		}
		if ts.Pending(j.ID) != nil {
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

// Failure is the JSON-RPC error an ended task that has no result answers
// with: a failed call's own (its code kept in the job's row), else one
// saying how the task ended; either tells of its late end (WithLate).
func Failure(j *store.Job) *jsonrpc.Error { return WithLate(failureOf(j), j) }

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

// TaskError is the answer to a task method whose job could not be read:
// -32602 for an unknown, foreign or expired id, saying which.
func TaskError(id string, err error) *jsonrpc.Error {
	if jobs.IsIDError(err) {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: task %q: %v", id, errors.Unwrap(err))
	}
	return jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error: reading task %q: %v", id, err)
}

// WithTaskSupport returns a tool's JSON with execution.taskSupport
// "optional" (mcpx runs any tool as a task), unless the tool says
// "required" itself.
func WithTaskSupport(raw json.RawMessage) json.RawMessage {
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

// IsMetaTool reports whether name is one of mcpx's own tools, which run
// only as plain calls.
func IsMetaTool(name string) bool {
	switch name {
	case "mcpx_search", "mcpx_call", "mcpx_job", "mcpx_job_cancel", "mcpx_exec", "mcpx_describe":
		return true
	}
	return false
}
