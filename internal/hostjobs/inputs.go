package hostjobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// A task's questions, of either era. When the call of a task asks its
// host something (a legacy upstream's elicitation, sampling or roots
// request, or an upstream's input_required, its own or its task's), mcpx
// keeps the question with the task, which reads input_required, and the
// call waits for the answer: a 2026-07-28 host sees the question in
// tasks/get's inputRequests and answers with tasks/update; a 2025-11-25
// host's tasks/result, which waits for the task, is sent it as a request
// related to the task on its own stream, and its answer goes back to the
// call. A call that asks before it is a task (2026-07-28) answers its
// host input_required as it is, for the host to retry (the round trips
// come before the task). The questions live in the gateway running the
// call.

// taskInput holds one task's outstanding questions and their answers.
type taskInput struct {
	mu      sync.Mutex
	pending map[string]*question // by the key the host sees
	answers map[string]answer
	used    map[string]bool // every key ever asked: keys are unique over a task's life
	wake    chan struct{}   // closed, and replaced, when answers come
	seq     int
}

// question is one outstanding question.
type question struct {
	req  relay.InputRequest
	sent bool          // put to a 2025-11-25 host's tasks/result, waiting there
	gone chan struct{} // closed once answered or withdrawn
}

// answer is the host's answer to a question: its result, or its error.
type answer struct {
	res json.RawMessage
	err *jsonrpc.Error
}

// signal is closed, and replaced, each time it fires.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns the channel the next fire closes.
func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// taskInputOf returns task id's questions, made on first use and dropped
// when the call c ends.
func (t *Tasks) taskInputOf(id string, c *jobs.Call) *taskInput {
	ti, loaded := t.inputs.LoadOrStore(id, &taskInput{pending: map[string]*question{},
		answers: map[string]answer{}, used: map[string]bool{}, wake: make(chan struct{})})
	if !loaded && c != nil {
		c.AfterEnd(func() { t.inputs.Delete(id) })
	}
	return ti.(*taskInput)
}

// Pending returns a live task's outstanding questions, nil if none.
func (t *Tasks) Pending(id string) map[string]relay.InputRequest {
	v, ok := t.inputs.Load(id)
	if !ok {
		return nil
	}
	ti := v.(*taskInput)
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if len(ti.pending) == 0 {
		return nil
	}
	out := make(map[string]relay.InputRequest, len(ti.pending))
	for k, q := range ti.pending {
		out[k] = q.req
	}
	return out
}

// Answer hands task id's call the host's responses to its outstanding
// questions; others (never asked, answered already), and those for a
// task with none, are ignored.
func (t *Tasks) Answer(id string, responses map[string]json.RawMessage) {
	if v, ok := t.inputs.Load(id); ok {
		v.(*taskInput).answer(responses)
	}
}

// Asked returns what is closed as a task's call next asks its host
// something.
func (t *Tasks) Asked() <-chan struct{} { return t.asked.wait() }

// answer takes the host's responses to outstanding questions; others
// (never asked, answered already) are ignored.
func (ti *taskInput) answer(responses map[string]json.RawMessage) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	for k, r := range responses {
		ti.settleLocked(k, answer{res: r})
	}
}

// settleLocked answers question k, if it is outstanding. ti.mu is held.
func (ti *taskInput) settleLocked(k string, a answer) {
	q, ok := ti.pending[k]
	if !ok {
		return
	}
	delete(ti.pending, k)
	close(q.gone)
	ti.answers[k] = a
	close(ti.wake)
	ti.wake = make(chan struct{})
}

// take marks the questions no host has been sent yet as sent, and
// returns them (2025-11-25: a tasks/result puts them to its host).
func (ti *taskInput) take() map[string]*question {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	out := map[string]*question{}
	for k, q := range ti.pending {
		if !q.sent {
			q.sent = true
			out[k] = q
		}
	}
	return out
}

// unsend makes question k one to send again: the host it went to left
// without an answer.
func (ti *taskInput) unsend(k string) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if q, ok := ti.pending[k]; ok {
		q.sent = false
	}
}

// AskInput keeps the requests of c, a task's call (nil: not a task
// yet), with the task until the host has answered every one; before the
// call is a task, it passes them to the host as input_required. A host's
// error answer to any is the error returned.
func (t *Tasks) AskInput(ctx context.Context, c *jobs.Call, keys []string, reqs map[string]relay.InputRequest) (map[string]json.RawMessage, bool, error) {
	if c == nil {
		return nil, true, nil // not a task yet
	}
	id := c.ID()
	if id == "" {
		return nil, true, nil
	}
	ti := t.taskInputOf(id, c)
	ti.mu.Lock()
	hostKey := make(map[string]string, len(keys)) // upstream key to the host's
	for _, k := range keys {
		hk := k
		for ti.used[hk] {
			ti.seq++
			hk = fmt.Sprintf("%s-%d", k, ti.seq)
		}
		ti.used[hk] = true
		hostKey[k] = hk
		ti.pending[hk] = &question{req: reqs[k], gone: make(chan struct{})}
	}
	ti.mu.Unlock()
	t.asked.fire()
	for {
		ti.mu.Lock()
		all := true
		for _, hk := range hostKey {
			if _, ok := ti.answers[hk]; !ok {
				all = false
			}
		}
		if all {
			out := make(map[string]json.RawMessage, len(keys))
			var failed *jsonrpc.Error
			for k, hk := range hostKey {
				an := ti.answers[hk]
				delete(ti.answers, hk)
				out[k] = an.res
				if an.err != nil {
					failed = an.err
				}
			}
			ti.mu.Unlock()
			if failed != nil {
				return nil, false, failed
			}
			return out, false, nil
		}
		wake := ti.wake
		ti.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			ti.mu.Lock()
			for _, hk := range hostKey {
				if q, ok := ti.pending[hk]; ok {
					close(q.gone)
					delete(ti.pending, hk)
				}
				delete(ti.answers, hk)
			}
			ti.mu.Unlock()
			return nil, false, context.Cause(ctx)
		}
	}
}

// errWithdrawn ends a question a 2025-11-25 host was sent once the task's
// call no longer waits for it.
var errWithdrawn = errors.New("the task's call no longer needs the answer")

// Asker puts a question to a host and waits for its answer: a JSON-RPC
// error answer is a *jsonrpc.Error.
type Asker interface {
	Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// AskQuestions puts task id's questions that no host has been sent to
// asker (a 2025-11-25 host's tasks/result stream), each tagged with the
// task, and hands the call the answers. It reports whether it asked any.
// A question its host leaves unanswered (the tasks/result ended) is kept
// for the next tasks/result.
func (t *Tasks) AskQuestions(ctx context.Context, id string, asker Asker) bool {
	v, ok := t.inputs.Load(id)
	if !ok {
		return false
	}
	ti := v.(*taskInput)
	qs := ti.take()
	for k, q := range qs {
		params := q.req.Params
		if obj, err := jsonrpc.ParseObject(params); err == nil || len(params) == 0 {
			if obj == nil {
				obj = &jsonrpc.Object{}
			}
			mcp.EditMeta(obj, func(m *jsonrpc.Object) {
				m.Set(mcp.MetaRelatedTask, jsonrpc.MustMarshal(map[string]string{"taskId": id}))
			})
			params = obj.Bytes()
		}
		// The question is withdrawn from the host once the call no
		// longer waits for it (the task was cancelled, or it ended).
		qctx, cancel := context.WithCancelCause(ctx)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			select {
			case <-q.gone:
				cancel(errWithdrawn)
			case <-qctx.Done():
			}
		}()
		res, err := asker.Ask(qctx, q.req.Method, params)
		cancel(nil)
		<-watched
		var rpcErr *jsonrpc.Error
		ti.mu.Lock()
		switch {
		case err == nil:
			ti.settleLocked(k, answer{res: res})
		case errors.As(err, &rpcErr):
			ti.settleLocked(k, answer{err: rpcErr})
		}
		ti.mu.Unlock()
		if err != nil && rpcErr == nil {
			ti.unsend(k)
		}
	}
	return len(qs) > 0
}
