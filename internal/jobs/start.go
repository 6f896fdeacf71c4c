package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"mcpx/internal/relay"
)

// Way is how a call comes into the manager through Start, its one way
// in: run on a goroutine of the manager's or running already elsewhere,
// a job at once or only once promoted. Later, Now, Relayed and Adopted
// make one.
type Way struct {
	run    func(ctx context.Context, c *Call) (json.RawMessage, error)
	now    bool                    // a job at once: its row is written before run starts
	cancel context.CancelCauseFunc // set: the call runs elsewhere (Adopted)
	since  time.Time               // when the call that runs elsewhere started
}

// Later runs run on a goroutine of the manager's, under a context that
// only the call's own ends (its cancel, the manager's stop) end. The call
// becomes a job when [Call.Promote] makes it one (a streamed call past
// its client's timer), or never.
func Later(run func(ctx context.Context, c *Call) (json.RawMessage, error)) Way {
	return Way{run: run}
}

// Now runs run as Later does, as a job at once: its row is written
// before run starts, so the answer is the job however fast run ends.
// When the row cannot be written, run never starts and Start fails.
func Now(run func(ctx context.Context, c *Call) (json.RawMessage, error)) Way {
	return Way{run: run, now: true}
}

// Adopted is a call that already runs elsewhere (on its host request's
// own goroutine) since since, made a job at once, its row written before
// Start returns: its host's timer is about to fire, or the host left, or
// asked for the background. cancel ends the call; the caller must call
// [Call.Finish] with its outcome.
func Adopted(cancel context.CancelCauseFunc, since time.Time) Way {
	return Way{cancel: cancel, since: since}
}

// Start is the one way into the manager: every face's call that is, or
// may become, a job comes in here (a host's call past its timer or in the
// background, a task of either revision, a script, the local API's and
// so the CLI's calls), as way says. spec's Describe, if set, runs as the
// call becomes a job; ctx bounds the write of its row (Now, Relayed and
// Adopted write it before Start returns). Start fails with ErrStopped
// when the manager is not running.
func (m *Manager) Start(ctx context.Context, spec Spec, way Way) (*Call, error) {
	switch {
	case way.cancel != nil:
		return m.adopted(ctx, spec, way.cancel, way.since)
	case way.run == nil:
		return nil, errors.New("jobs: a call comes in by Later, Now, Relayed or Adopted")
	case way.now:
		return m.startNow(ctx, spec, way.run)
	}
	return m.start(spec, "", 1, time.Time{}, way.run)
}

// startNow starts run as a job at once (Now).
func (m *Manager) startNow(ctx context.Context, spec Spec, run func(ctx context.Context, c *Call) (json.RawMessage, error)) (*Call, error) {
	written := make(chan struct{})
	spec.started = true
	c, err := m.start(spec, "", 1, time.Time{}, func(ctx context.Context, c *Call) (json.RawMessage, error) {
		<-written
		if err := context.Cause(ctx); err != nil {
			return nil, err
		}
		return run(ctx, c)
	})
	if err != nil {
		return nil, err
	}
	_, _, err = c.Promote(ctx) // ok: the call cannot end before written
	if err != nil {
		c.cancel(&relay.Cause{Kind: relay.JobCancelled, Detail: "a failed write of its job"})
	}
	close(written)
	if err != nil {
		<-c.done
		return nil, err
	}
	return c, nil
}

// adopted makes a call that runs elsewhere a job at once (Adopted).
func (m *Manager) adopted(ctx context.Context, spec Spec, cancel context.CancelCauseFunc, started time.Time) (*Call, error) {
	c := &Call{m: m, spec: spec, cancel: cancel, done: make(chan struct{}), Start: started, began: started, attempt: 1}
	m.mu.Lock()
	if !m.running {
		m.mu.Unlock()
		return nil, ErrStopped
	}
	m.live[c] = struct{}{}
	m.calls.Add(1)
	m.mu.Unlock()
	if _, _, err := c.Promote(ctx); err != nil {
		m.mu.Lock()
		delete(m.live, c)
		m.mu.Unlock()
		m.calls.Done()
		return nil, err
	}
	return c, nil
}

// Finish records the outcome of an Adopted call.
func (c *Call) Finish(res json.RawMessage, err error) {
	c.end(res, err)
	c.m.calls.Done()
}
