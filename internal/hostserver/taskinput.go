package hostserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"mcpx/internal/jobs"
	"mcpx/internal/relay"
)

// A 2026-07-28 task's questions. When the call of a task asks its host
// something (an upstream's input_required, or a legacy upstream's
// elicitation or sampling request), mcpx keeps the question with the
// task, which reads input_required with it in inputRequests, and waits
// for the host's tasks/update to answer it; the call then goes on with
// the answers. A call that asks before it is a task answers its host
// input_required as it is, for the host to retry (the round trips come
// before the task). The questions live in the gateway running the call.

// taskInput holds one task's outstanding questions and their answers.
type taskInput struct {
	mu      sync.Mutex
	pending map[string]relay.InputRequest // by the key the host sees
	answers map[string]json.RawMessage
	used    map[string]bool // every key ever asked: keys are unique over a task's life
	wake    chan struct{}   // closed, and replaced, when answers come
	seq     int
}

// taskInputOf returns task id's questions, made on first use and dropped
// when the call c ends.
func (s *Server) taskInputOf(id string, c *jobs.Call) *taskInput {
	ti, loaded := s.taskInputs.LoadOrStore(id, &taskInput{pending: map[string]relay.InputRequest{},
		answers: map[string]json.RawMessage{}, used: map[string]bool{}, wake: make(chan struct{})})
	if !loaded && c != nil {
		c.AfterEnd(func() { s.taskInputs.Delete(id) })
	}
	return ti.(*taskInput)
}

// pendingOf returns a live task's outstanding questions, nil if none.
func (s *Server) pendingOf(id string) map[string]relay.InputRequest {
	v, ok := s.taskInputs.Load(id)
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
		out[k] = q
	}
	return out
}

// answer takes the host's responses to outstanding questions; others
// (never asked, answered already) are ignored.
func (ti *taskInput) answer(responses map[string]json.RawMessage) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	took := false
	for k, r := range responses {
		if _, ok := ti.pending[k]; ok {
			delete(ti.pending, k)
			ti.answers[k] = r
			took = true
		}
	}
	if took {
		close(ti.wake)
		ti.wake = make(chan struct{})
	}
}

// taskAsker is the Asker of a 2026-07-28 task's call.
type taskAsker struct {
	srv  *Server
	caps json.RawMessage // the host's capabilities, of the call's request
	call func() *jobs.Call
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
// every one; before the call is a task, it passes them to the host as
// input_required.
func (a *taskAsker) AskInput(ctx context.Context, keys []string, reqs map[string]relay.InputRequest) (map[string]json.RawMessage, bool, error) {
	c := a.call()
	if c == nil {
		return nil, true, nil // not a task yet
	}
	id := c.ID()
	if id == "" {
		return nil, true, nil
	}
	ti := a.srv.taskInputOf(id, c)
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
		ti.pending[hk] = reqs[k]
	}
	ti.mu.Unlock()
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
			for k, hk := range hostKey {
				out[k] = ti.answers[hk]
				delete(ti.answers, hk)
			}
			ti.mu.Unlock()
			return out, false, nil
		}
		wake := ti.wake
		ti.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			ti.mu.Lock()
			for _, hk := range hostKey {
				delete(ti.pending, hk)
				delete(ti.answers, hk)
			}
			ti.mu.Unlock()
			return nil, false, context.Cause(ctx)
		}
	}
}
