package hostserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/store"
)

// MCP tasks of the 2025-11-25 revision, toward hosts. Every task is a
// job: a task-augmented tools/call is a background call (relayAsJob)
// whose answer is a CreateTaskResult instead of a tool result, and the
// task id is the job id, so tasks are kept, bound to their principal,
// listed and recovered after a restart as jobs are.

// Task methods of 2025-11-25.
const (
	methodTasksGet    = "tasks/get"
	methodTasksResult = "tasks/result"
	methodTasksList   = "tasks/list"
	methodTasksCancel = "tasks/cancel"
	methodTaskStatus  = "notifications/tasks/status"
	metaRelatedTask   = "io.modelcontextprotocol/related-task"
)

// Task defaults.
const (
	DefaultTaskPollInterval = time.Second
	tasksPageSize           = 100
)

// tasksCapability is what mcpx declares to a 2025-11-25 host that it may
// give tasks to.
var tasksCapability = json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)

// legacyTasks reports whether a legacy host of version gets tasks: mcpx
// keeps jobs, and the host speaks the revision tasks came with.
func (s *Server) legacyTasks(version string) bool {
	return s.opts.Jobs != nil && version == mcp.Version20251125
}

// taskRequest is what a task-augmented tools/call asked for.
type taskRequest struct {
	ttl time.Duration // granted
	// modern: a 2026-07-28 call, a task once it has run after.
	modern bool
	after  time.Duration
}

// taskParams reads params.task of a tools/call: nil when there is none.
// It removes the member: the upstream is called plainly.
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

// taskJSON is a 2025-11-25 Task.
type taskJSON struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

// taskOf is job j as a task. A task's ttl is the one granted when this
// gateway created it; one created before a restart reads the bound.
func (s *Server) taskOf(j *store.Job) taskJSON {
	t := taskJSON{
		TaskID: j.ID, CreatedAt: rfc3339(j.Created), LastUpdatedAt: rfc3339(j.Updated),
		TTL: s.taskMaxTTL().Milliseconds(),
	}
	if ttl, ok := s.taskTTLs.Load(j.ID); ok {
		t.TTL = ttl.(time.Duration).Milliseconds()
	}
	if t.LastUpdatedAt == "" {
		t.LastUpdatedAt = t.CreatedAt
	}
	switch j.Status {
	case store.Running:
		t.Status, t.PollInterval = "working", s.taskPollInterval().Milliseconds()
		if len(j.Progress) > 0 {
			var p jobs.Progress
			if json.Unmarshal(j.Progress, &p) == nil {
				t.StatusMessage = progressText(&p)
			}
		}
	case store.Completed:
		t.Status = "completed"
		if toolFailed(j.Result) {
			// A tool result with isError is a failed task in 2025-11-25.
			t.Status, t.StatusMessage = "failed", "the tool reported an error: tasks/result has it"
		}
	case store.Failed:
		t.Status, t.StatusMessage = "failed", j.Error
	case store.Cancelled:
		t.Status, t.StatusMessage = "cancelled", j.Error
	case store.Interrupted:
		t.Status, t.StatusMessage = "failed", "interrupted: "+j.Error
	default:
		t.Status, t.StatusMessage = "failed", "mcpx does not know the job status "+string(j.Status)
	}
	return t
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

// replyTask answers a task-augmented tools/call with the job it started,
// and has the host told when the task ends.
func (hs *hostSession) replyTask(req *request, c *jobs.Call, id string) {
	now := time.Now()
	hs.srv.taskTTLs.Store(id, req.task.ttl)
	t := hs.srv.taskOf(&store.Job{ID: id, Status: store.Running, Created: c.Start, Updated: now})
	if req.task.modern {
		// Flat, resultType task; written as is (req.result would make
		// its resultType complete).
		reply(req.sink, req.msg.ID, jsonrpc.MustMarshal(detailedTask{ResultType: "task", TaskID: t.TaskID, Status: t.Status,
			CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt, TTLMs: t.TTL, PollIntervalMs: t.PollInterval}))
		return
	}
	hs.replyJSON(req, struct {
		Task taskJSON `json:"task"`
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
		w := &hs.srv.watch
		w.mu.Lock()
		out = w.legacy[hs]
		w.mu.Unlock()
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
	out.pushWhile(nil, jsonrpc.NewNotification(methodTaskStatus, jsonrpc.MustMarshal(hs.srv.taskOf(j))).Encode())
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

func (hs *hostSession) tasksGet(ctx context.Context, req *request) {
	id, rpcErr := taskID(req)
	if rpcErr != nil {
		fail(req.sink, req.msg.ID, rpcErr)
		return
	}
	j, err := hs.srv.opts.Jobs.Get(ctx, hs.jobPrincipal(), id)
	if err != nil {
		fail(req.sink, req.msg.ID, taskError(id, err))
		return
	}
	hs.replyJSON(req, hs.srv.taskOf(j))
}

// tasksResult waits for the task to end, as the revision says, and
// answers what the call would have: its tool result, tagged with the
// task, or a JSON-RPC error saying why it failed.
func (hs *hostSession) tasksResult(ctx context.Context, req *request) {
	id, rpcErr := taskID(req)
	if rpcErr != nil {
		fail(req.sink, req.msg.ID, rpcErr)
		return
	}
	m := hs.srv.opts.Jobs
	var j *store.Job
	var err error
	for j == nil || !j.Status.Final() {
		if j, err = m.Wait(ctx, hs.jobPrincipal(), id, time.Hour); err != nil {
			if ctx.Err() != nil {
				hs.end(req, context.Cause(ctx))
				return
			}
			fail(req.sink, req.msg.ID, taskError(id, err))
			return
		}
	}
	switch j.Status {
	case store.Completed:
		res, perr := jsonrpc.ParseObject(j.Result)
		if perr != nil {
			fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error: task %q: its stored result is not an object", id))
			return
		}
		mcp.EditMeta(res, func(meta *jsonrpc.Object) {
			meta.Set(metaRelatedTask, jsonrpc.MustMarshal(map[string]string{"taskId": id}))
		})
		reply(req.sink, req.msg.ID, hs.toolResult(req, res.Bytes()))
	case store.Cancelled:
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInternalError, "task %q was cancelled: %s", id, j.Error))
	case store.Interrupted:
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInternalError, "task %q was interrupted: %s", id, j.Error))
	default:
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInternalError, "task %q failed: %s", id, j.Error))
	}
}

// tasksList lists the principal's own tasks (its jobs), newest first, a
// page at a time.
func (hs *hostSession) tasksList(ctx context.Context, req *request) {
	from := 0
	if raw, ok := req.params.Get("cursor"); ok && string(raw) != "null" {
		c, _ := jsonrpc.Unquote(raw)
		n, err := decodeCursor(c)
		if err != nil {
			fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: unknown cursor"))
			return
		}
		from = n
	}
	all, err := hs.srv.opts.Jobs.List(ctx, hs.jobPrincipal(), from+tasksPageSize+1)
	if err != nil {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error: listing tasks: %v", err))
		return
	}
	out := struct {
		Tasks      []taskJSON `json:"tasks"`
		NextCursor string     `json:"nextCursor,omitempty"`
	}{Tasks: []taskJSON{}}
	for i := from; i < len(all) && i < from+tasksPageSize; i++ {
		out.Tasks = append(out.Tasks, hs.srv.taskOf(all[i]))
	}
	if len(all) > from+tasksPageSize {
		out.NextCursor = encodeCursor(from + tasksPageSize)
	}
	hs.replyJSON(req, out)
}

func encodeCursor(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("tasks:" + strconv.Itoa(n)))
}

func decodeCursor(c string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !bytes.HasPrefix(b, []byte("tasks:")) {
		return 0, fmt.Errorf("unknown cursor")
	}
	n, err := strconv.Atoi(string(b[len("tasks:"):]))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("unknown cursor")
	}
	return n, nil
}

// tasksCancel cancels a running task: the upstream call is cancelled
// with a cause naming tasks/cancel, and the task reads cancelled before
// the answer. An ended task is refused with -32602, as the revision says.
func (hs *hostSession) tasksCancel(ctx context.Context, req *request) {
	id, rpcErr := taskID(req)
	if rpcErr != nil {
		fail(req.sink, req.msg.ID, rpcErr)
		return
	}
	m := hs.srv.opts.Jobs
	j, err := m.Get(ctx, hs.jobPrincipal(), id)
	if err != nil {
		fail(req.sink, req.msg.ID, taskError(id, err))
		return
	}
	if j.Status.Final() {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: task %q has ended (%s): it cannot be cancelled", id, hs.srv.taskOf(j).Status))
		return
	}
	if j, err = m.CancelJob(context.WithoutCancel(ctx), hs.jobPrincipal(), id, "the host's tasks/cancel"); err != nil {
		fail(req.sink, req.msg.ID, taskError(id, err))
		return
	}
	hs.replyJSON(req, hs.srv.taskOf(j))
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

var taskHandlers = map[string]handler{
	methodTasksGet:    (*hostSession).tasksGet,
	methodTasksResult: (*hostSession).tasksResult,
	methodTasksList:   (*hostSession).tasksList,
	methodTasksCancel: (*hostSession).tasksCancel,
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
