package hostjobs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/outq"
	"mcpx/internal/relay"
)

// A job's questions and log messages. A call that became a job
// (link.go) goes on after its host was answered with the job. What its
// upstream asks from then on (elicitation, sampling, roots) goes to the
// host that started it while that host can still be sent requests outside
// a request of its own: a stream connection (stdio, or the daemon's) that
// is open, or a legacy HTTP session's GET stream while one is open; the
// answer goes back upstream. The question waits at most JobAskWait, and
// while it waits the job's progress message says so (mcpx_job, mcpx jobs
// show); a GET stream that ends does not end it (the host may open
// another, where it is put again): its session's end does. Otherwise — the host left, has no such stream, did not declare
// the capability, or speaks 2026-07-28, which takes questions only in the
// answer to its own request (it has had that: the job) — the upstream is
// answered with an error naming the job and why, and the job goes on: the
// upstream decides what its call does without the answer. The job's log
// messages on its call's own upstream stream go to the same stream while
// it is open, at the host's level; a 2026-07-28 host's go nowhere.

// JobAskWait is how long a job's question waits for its host's answer:
// a person may be slow, but a job never waits for ever on one that will
// not come.
const JobAskWait = 10 * time.Minute

// jobRefusal returns why the job the call became cannot put method with
// params to its host, nil if it can.
func (l *Link) jobRefusal(c *jobs.Call, method string, params json.RawMessage) *jsonrpc.Error {
	if why := l.cannotAsk(method, params); why != "" {
		return JobError(c, method, why)
	}
	return nil
}

// cannotAsk says why the job the call became cannot put method with
// params to its host, "" if it can.
func (l *Link) cannotAsk(method string, params json.RawMessage) string {
	switch {
	case l.Host.Modern():
		return "its host speaks 2026-07-28, which takes questions only in the answer to its own request, and that answer was the job (a host asks for a task to be asked during long work)"
	case l.Host.JobStream() == nil:
		return "the host that started it has left, or has no stream open for requests from mcpx (a Streamable HTTP session opens one with GET)"
	case !l.Host.Declares(method, params):
		return "the host that started it did not declare the capability this needs"
	}
	return ""
}

// askJobHost puts an upstream's question of job c to the host that
// started it, on its stream (Host.JobStream), and waits for the answer
// (waitJobHost).
func (l *Link) askJobHost(ctx context.Context, c *jobs.Call, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := l.jobRefusal(c, method, params); err != nil {
		return nil, err
	}
	h := l.Host
	q := h.JobStream()
	if q == nil {
		return nil, JobError(c, method, "the host that started it has left")
	}
	id, ch := h.Questions().Add(jsonrpc.NewIntID)
	defer h.Questions().Remove(id)
	defer l.waitingOn(c, method)() // said before the host can see the question
	line := jsonrpc.NewRequest(id, method, params).Encode()
	if q.Push(line) != nil {
		return nil, JobError(c, method, "the host that started it has left")
	}
	h.Log().Info("put a job's question to its host", "job", c.ID(), "host", h.HostID(), "method", method)
	return l.waitJobHost(ctx, c, method, id, ch, q, line)
}

// waitJobHost waits for the answer to question id (method) of job c,
// put to its host as line (nil: put on a stream that ended with the job
// answer, and never put again), which q, its stream, carries: until the
// host answers, it leaves, JobAskWait passes, or ctx (the question's)
// ends. Every outcome but an answer is an error naming the job, except
// ctx's end, whose cause is returned; the host is told of a question it
// need no longer answer. The caller says the job waits (waitingOn).
//
// A stream connection's end is its host's. A legacy HTTP session's GET
// stream may end and be opened again (the host's HTTP client reconnects):
// the question waits for the session's end, and is put again on the next
// GET stream, under the same id, since the one it was on may have ended
// before it was read.
func (l *Link) waitJobHost(ctx context.Context, c *jobs.Call, method string, id jsonrpc.ID, ch <-chan *jsonrpc.Message, q *outq.Queue, line []byte) (json.RawMessage, error) {
	h := l.Host
	reopens := h.Reopens() // an HTTP session, not a stream connection
	t := time.NewTimer(JobAskWait)
	defer t.Stop()
	var cause error
	for cause == nil {
		var opened, gone <-chan struct{}
		if q == nil {
			opened, gone = h.StreamNext(), h.Ended()
			if nq := h.JobStream(); nq != nil && !isDone(nq) {
				q = nq
				if line != nil {
					_ = q.Push(line)
					h.Log().Info("put a job's question to its host again, on its new stream", "job", c.ID(), "host", h.HostID(), "method", method)
				}
				continue
			}
		}
		var done <-chan struct{}
		if q != nil {
			done = q.Done()
		}
		select {
		case m := <-ch:
			return AnswerOf(m)
		case <-done:
			if !reopens {
				return nil, JobError(c, method, "the host that started it left before it answered")
			}
			q = nil
		case <-opened:
		case <-gone:
			return nil, JobError(c, method, "the session of the host that started it ended before it answered")
		case <-t.C:
			cause = JobError(c, method, fmt.Sprintf("its host did not answer within %s", JobAskWait))
		case <-ctx.Done():
			cause = context.Cause(ctx)
		}
	}
	if q != nil {
		_ = q.Push(Withdrawal(id, cause))
	}
	return nil, cause
}

func isDone(q *outq.Queue) bool {
	select {
	case <-q.Done():
		return true
	default:
		return false
	}
}

// AnswerOf is a host's answer to a question of mcpx's: its result, or
// its JSON-RPC error as it is.
func AnswerOf(m *jsonrpc.Message) (json.RawMessage, error) {
	if m.Error != nil {
		return nil, m.Error
	}
	return m.Result, nil
}

// Withdrawal tells a host that mcpx no longer waits for the answer to
// its question id, and why (cause).
func Withdrawal(id jsonrpc.ID, cause error) []byte {
	return jsonrpc.NewNotification(mcp.MethodCancelled, jsonrpc.MustMarshal(mcp.CancelledParams{
		RequestID: id.Raw(), Reason: relay.Reason(cause),
	})).Encode()
}

// JobLine sends line, a notification of the call's, to the host that
// started the job the call became, on its stream, if it has one; it
// reports whether the call is such a job (its host's request answered:
// the line goes nowhere else).
func (l *Link) JobLine(line []byte) bool {
	if l == nil || l.Live() {
		return false
	}
	if l.JobCall() != nil && !l.Host.Modern() {
		if q := l.Host.JobStream(); q != nil {
			_ = q.Push(line)
		}
	}
	return true
}

// jobResult is what job c keeps of its call's result res: res, unless it
// is an upstream's input_required that the call could not put to its
// host (a 2026-07-28 host's call, or one whose host could take no
// requests, ends with it): mcpx_job would hand the host questions that
// no retry of mcpx_job answers, so the job ends with a tool error that
// names it, the question, and why. A task's questions wait in the task
// (inputs.go).
func (l *Link) jobResult(c *jobs.Call, res json.RawMessage) json.RawMessage {
	if l.Host.IsTask() || !bytes.Contains(res, []byte(`"`+mcp.ResultTypeInputRequired+`"`)) {
		return res // a task's questions wait in it; most results are not parsed
	}
	var r struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		} `json:"inputRequests"`
	}
	if json.Unmarshal(res, &r) != nil || r.ResultType != mcp.ResultTypeInputRequired {
		return res
	}
	method, params := "request", json.RawMessage(nil)
	for _, q := range r.InputRequests { // one names the kind of question
		method, params = q.Method, q.Params
		break
	}
	why := l.cannotAsk(method, params)
	if why == "" {
		why = "its call could not carry questions to its host"
	}
	return jsonrpc.MustMarshal(ToolError("the upstream asked for input, and the job ended: " + CannotPut(method, c.ID(), why)))
}
