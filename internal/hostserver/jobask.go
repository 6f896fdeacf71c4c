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
	"mcpx/internal/mcp"
	"mcpx/internal/outq"
	"mcpx/internal/relay"
)

// A job's questions and log messages. A call that became a job
// (joblink.go) goes on after its host was answered with the job. What its
// upstream asks from then on (elicitation, sampling, roots) goes to the
// host that started it while that host can still be sent requests outside
// a request of its own: a stream connection (stdio, or the daemon's) that
// is open, or a legacy HTTP session's GET stream while one is open; the
// answer goes back upstream. The question waits at most jobAskWait, and
// while it waits the job's progress message says so (mcpx_job, mcpx jobs
// show); a GET stream that ends does not end it (the host may open
// another, where it is put again): its session's end does. Otherwise — the host left, has no such stream, did not declare
// the capability, or speaks 2026-07-28, which takes questions only in the
// answer to its own request (it has had that: the job) — the upstream is
// answered with an error naming the job and why, and the job goes on: the
// upstream decides what its call does without the answer. The job's log
// messages on its call's own upstream stream go to the same stream while
// it is open, at the host's level; a 2026-07-28 host's go nowhere.

// jobAskWait is how long a job's question waits for its host's answer:
// a person may be slow, but a job never waits for ever on one that will
// not come.
const jobAskWait = 10 * time.Minute

// jobStream returns the stream of hs that carries what mcpx sends it
// outside its requests (streamOf), as the queue behind it, nil if none.
func (hs *hostSession) jobStream() *outq.Queue {
	if s := hs.srv.streamOf(hs); s != nil {
		return s.queue()
	}
	return nil
}

// jobRefusal returns why the job the call became cannot put method with
// params to its host, nil if it can.
func (l *jobLink) jobRefusal(c *jobs.Call, method string, params json.RawMessage) *jsonrpc.Error {
	if why := l.cannotAsk(method, params); why != "" {
		return hostjobs.JobError(c, method, why)
	}
	return nil
}

// cannotAsk says why the job the call became cannot put method with
// params to its host, "" if it can.
func (l *jobLink) cannotAsk(method string, params json.RawMessage) string {
	switch {
	case l.req.modern:
		return "its host speaks 2026-07-28, which takes questions only in the answer to its own request, and that answer was the job (a host asks for a task to be asked during long work)"
	case l.hs.jobStream() == nil:
		return "the host that started it has left, or has no stream open for requests from mcpx (a Streamable HTTP session opens one with GET)"
	case !declares(l.req.caps, method, params):
		return "the host that started it did not declare the capability this needs"
	}
	return ""
}

// askJobHost puts an upstream's question of job c to the host that
// started it, on its stream (jobStream), and waits for the answer
// (waitJobHost).
func (l *jobLink) askJobHost(ctx context.Context, c *jobs.Call, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := l.jobRefusal(c, method, params); err != nil {
		return nil, err
	}
	hs, q := l.hs, l.hs.jobStream()
	if q == nil {
		return nil, hostjobs.JobError(c, method, "the host that started it has left")
	}
	id, ch := hs.questions.Add(jsonrpc.NewIntID)
	defer hs.questions.Remove(id)
	defer l.waitingOn(c, method)() // said before the host can see the question
	line := jsonrpc.NewRequest(id, method, params).Encode()
	if q.Push(line) != nil {
		return nil, hostjobs.JobError(c, method, "the host that started it has left")
	}
	hs.srv.log.Info("put a job's question to its host", "job", c.ID(), "host", hs.id, "method", method)
	return l.waitJobHost(ctx, c, method, id, ch, q, line)
}

// waitJobHost waits for the answer to question id (method) of job c,
// put to its host as line (nil: put on a stream that ended with the job
// answer, and never put again), which q, its stream, carries: until the
// host answers, it leaves, jobAskWait passes, or ctx (the question's)
// ends. Every outcome but an answer is an error naming the job, except
// ctx's end, whose cause is returned; the host is told of a question it
// need no longer answer. The caller says the job waits (waitingOn).
//
// A stream connection's end is its host's. A legacy HTTP session's GET
// stream may end and be opened again (the host's HTTP client reconnects):
// the question waits for the session's end, and is put again on the next
// GET stream, under the same id, since the one it was on may have ended
// before it was read.
func (l *jobLink) waitJobHost(ctx context.Context, c *jobs.Call, method string, id jsonrpc.ID, ch <-chan *jsonrpc.Message, q *outq.Queue, line []byte) (json.RawMessage, error) {
	hs := l.hs
	reopens := hs.out == nil // an HTTP session, not a stream connection
	t := time.NewTimer(jobAskWait)
	defer t.Stop()
	var cause error
	for cause == nil {
		var opened, gone <-chan struct{}
		if q == nil {
			opened, gone = hs.streamNext(), hs.ended()
			if nq := hs.jobStream(); nq != nil && !isDone(nq) {
				q = nq
				if line != nil {
					_ = q.Push(line)
					hs.srv.log.Info("put a job's question to its host again, on its new stream", "job", c.ID(), "host", hs.id, "method", method)
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
			return answerOf(m)
		case <-done:
			if !reopens {
				return nil, hostjobs.JobError(c, method, "the host that started it left before it answered")
			}
			q = nil
		case <-opened:
		case <-gone:
			return nil, hostjobs.JobError(c, method, "the session of the host that started it ended before it answered")
		case <-t.C:
			cause = hostjobs.JobError(c, method, fmt.Sprintf("its host did not answer within %s", jobAskWait))
		case <-ctx.Done():
			cause = context.Cause(ctx)
		}
	}
	if q != nil {
		_ = q.Push(withdrawal(id, cause))
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

// ended returns what is closed as the session ends (setClosing).
func (hs *hostSession) ended() <-chan struct{} {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.gone == nil {
		hs.gone = make(chan struct{})
		if hs.closing {
			close(hs.gone)
		}
	}
	return hs.gone
}

// streamNext returns what is closed as a stream next becomes the
// session's (watchLegacy): taken before looking for one, it misses none.
func (hs *hostSession) streamNext() <-chan struct{} {
	hs.streamMu.Lock()
	defer hs.streamMu.Unlock()
	if hs.nextStream == nil {
		hs.nextStream = make(chan struct{})
	}
	return hs.nextStream
}

// streamOpened tells those waiting for a stream of the session's that one
// is.
func (hs *hostSession) streamOpened() {
	hs.streamMu.Lock()
	defer hs.streamMu.Unlock()
	if hs.nextStream != nil {
		close(hs.nextStream)
		hs.nextStream = nil
	}
}

// answerOf is a host's answer to a question of mcpx's: its result, or
// its JSON-RPC error as it is.
func answerOf(m *jsonrpc.Message) (json.RawMessage, error) {
	if m.Error != nil {
		return nil, m.Error
	}
	return m.Result, nil
}

// withdrawal tells a host that mcpx no longer waits for the answer to
// its question id, and why (cause).
func withdrawal(id jsonrpc.ID, cause error) []byte {
	return jsonrpc.NewNotification(mcp.MethodCancelled, jsonrpc.MustMarshal(mcp.CancelledParams{
		RequestID: id.Raw(), Reason: relay.Reason(cause),
	})).Encode()
}

// jobLine sends line, a notification of the call's, to the host that
// started the job the call became, on its stream, if it has one; it
// reports whether the call is such a job (its host's request answered:
// the line goes nowhere else).
func (l *jobLink) jobLine(line []byte) bool {
	if l == nil || l.live() {
		return false
	}
	if l.jobCall() != nil && !l.req.modern {
		if q := l.hs.jobStream(); q != nil {
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
// (hostjobs/inputs.go).
func (l *jobLink) jobResult(c *jobs.Call, res json.RawMessage) json.RawMessage {
	if l.req.task != nil || !bytes.Contains(res, []byte(`"input_required"`)) {
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
	return jsonrpc.MustMarshal(toolError("the upstream asked for input, and the job ended: " + hostjobs.CannotPut(method, c.ID(), why)))
}
