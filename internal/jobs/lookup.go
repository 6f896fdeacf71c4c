package jobs

import (
	"context"
	"errors"
	"time"

	"mcpx/internal/principal"
	"mcpx/internal/relay"
	"mcpx/internal/store"
)

// Attach returns principal's live job for key, to wait on instead of
// running the same call again; nil if there is none.
func (m *Manager) Attach(principal, key string) *Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byKey[principal+"\x00"+key]
}

// Get returns principal's job id ("" reads any principal's).
func (m *Manager) Get(ctx context.Context, principal, id string) (*store.Job, error) {
	if err := m.open(ctx); err != nil {
		return nil, err
	}
	return m.st.Get(ctx, principal, id)
}

// List returns principal's jobs ("" for all), newest first.
func (m *Manager) List(ctx context.Context, principal string, limit int) ([]*store.Job, error) {
	if err := m.open(ctx); err != nil {
		return nil, err
	}
	return m.st.List(ctx, principal, limit)
}

// Wait returns principal's job id once it has ended, or as it is after
// wait. A job of this manager is waited on directly; another's is read
// again every pollEvery.
func (m *Manager) Wait(ctx context.Context, principal, id string, wait time.Duration) (*store.Job, error) {
	if err := m.open(ctx); err != nil {
		return nil, err
	}
	j, err := m.st.Get(ctx, principal, id)
	if err != nil || j.Status.Final() || wait <= 0 {
		return j, err
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	m.mu.Lock()
	c := m.byID[id]
	m.mu.Unlock()
	if c != nil {
		select {
		case <-c.done:
		case <-t.C:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		return m.st.Get(ctx, principal, id)
	}
	poll := time.NewTicker(pollEvery)
	defer poll.Stop()
	for {
		select {
		case <-poll.C:
			if j, err = m.st.Get(ctx, principal, id); err != nil || j.Status.Final() {
				return j, err
			}
		case <-t.C:
			return m.st.Get(ctx, principal, id)
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// pollEvery is how often Wait reads a job another owner runs.
const pollEvery = 250 * time.Millisecond

// CancelJob cancels owner's job id ("" for any principal's) for by,
// the canceller, in mcpx's words who ("mcpx_job_cancel", "mcpx jobs
// cancel"): the row first, then the call, whose upstream is told "job
// cancelled with <who>". A job that had ended is returned as it is.
func (m *Manager) CancelJob(ctx context.Context, owner, id string, by principal.Principal, who string) (*store.Job, error) {
	if err := m.open(ctx); err != nil {
		return nil, err
	}
	j, err := m.st.Get(ctx, owner, id)
	if err != nil || j.Status.Final() {
		return j, err
	}
	cause := &relay.Cause{Kind: relay.JobCancelled, Detail: who}
	m.writes.Add(1)
	if _, err := m.st.Cancel(ctx, id, cause.Error()); err != nil {
		return nil, err
	}
	m.recordCancel(j, by, who)
	m.mu.Lock()
	c := m.byID[id]
	m.mu.Unlock()
	if c != nil {
		c.cancel(cause)
		select {
		case <-c.done:
		case <-ctx.Done():
		}
	}
	return m.st.Get(ctx, owner, id)
}

// Live is a job of this manager's that is running.
type Live struct {
	ID, Principal, Server, Tool string
	Started                     time.Time
	Progress                    *Progress
	filter                      string // a script's: Target
}

// Live returns this manager's running jobs.
func (m *Manager) Live() []Live {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Live, 0, len(m.byID))
	for id, c := range m.byID {
		l := Live{ID: id, Principal: c.spec.Principal, Server: c.spec.Server, Tool: c.spec.Tool, Started: c.Start,
			filter: scriptFilter(c.spec.Server, c.spec.Params)}
		if c.moved {
			p := c.progress
			l.Progress = &p
		}
		out = append(out, l)
	}
	return out
}

// IsIDError reports whether err is about the job id (unknown, foreign,
// expired) rather than the store.
func IsIDError(err error) bool {
	var e *store.IDError
	return errors.As(err, &e)
}
