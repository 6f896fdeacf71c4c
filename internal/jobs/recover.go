package jobs

import (
	"context"
	"encoding/json"
	"time"

	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// What a job that a restart ran again, or closed, says of it.
const (
	rerunNote       = "mcpx stopped while this call ran; the tool is marked idempotent, so it was run again once"
	interruptedWhy  = "mcpx stopped while this call ran; it was not run again, because the tool is not marked idempotent and running it twice could do the work twice"
	secondFailedWhy = "mcpx stopped while this call ran, for the second time; it was run again once already and is not run a third time"
	// The same, when the job's lease lapsed while its owner may still
	// run it (a replica cut off from the store, which ends the calls of
	// idempotent tools when it knows it lost its lease).
	lapsedNote = "the mcpx running this call stopped renewing its lease (it stopped, or lost the job store and ended the call); the tool is marked idempotent, so it was run again once"
	lapsedWhy  = "the mcpx running this call stopped renewing its lease (it stopped, or lost the job store); the call was not run again, because the tool is not marked idempotent and running it twice could do the work twice; if that mcpx still runs it, its end is kept here as the job's late result"
)

// anyLease, as Orphans' lapsedFor, reaches every running job: an
// exclusive store's user at start, when no other owner can be alive.
const anyLease = -100 * 365 * 24 * time.Hour

// recover deals with the orphans it finds: each is closed as
// interrupted, or claimed and run again once if it is idempotent.
func (m *Manager) recover(ctx context.Context) {
	lapsedFor := m.grace()
	if m.opts.Exclusive {
		lapsedFor = anyLease
	}
	orphans, err := m.st.Orphans(ctx, lapsedFor)
	if err != nil {
		m.log.Warn("finding orphaned jobs", "err", err)
		return
	}
	for _, j := range orphans {
		m.mu.Lock()
		_, live := m.byID[j.ID]
		m.mu.Unlock()
		if !live { // a call of this manager's whose lease lapsed ends here
			m.adopt(ctx, j, lapsedFor)
		}
	}
}

func (m *Manager) adopt(ctx context.Context, j *store.Job, lapsedFor time.Duration) {
	rerun := j.Idempotent && m.opts.Rerun != nil && j.Attempt == 1
	note := j.Note
	if rerun {
		note = rerunNote
		if !m.opts.Exclusive {
			note = lapsedNote
		}
	}
	m.writes.Add(1)
	sent := time.Now() // the claim's lease is held from now (hold.go)
	ok, err := m.st.Claim(ctx, j.ID, j.Lease(), m.owner, m.opts.LeaseTerm, lapsedFor, note)
	if err != nil || !ok {
		return // another owner took it, or it ended meanwhile
	}
	if !rerun {
		why := interruptedWhy
		switch {
		case j.Idempotent && j.Attempt > 1:
			why = secondFailedWhy
		case !m.opts.Exclusive:
			why = lapsedWhy
		}
		m.writes.Add(1)
		if _, err := m.st.Finish(ctx, j.ID, store.Lease{Owner: m.owner, Attempt: j.Attempt + 1}, store.Interrupted, nil, why); err != nil {
			m.log.Warn("closing an interrupted job", "job", j.ID, "err", err)
		}
		m.log.Info("job interrupted by a stop of mcpx", "job", j.ID, "tool", j.Tool, "server", j.Server)
		return
	}
	spec := Spec{Principal: j.Principal, Server: j.Server, Tool: j.Tool, Params: j.Params, Key: j.Key, Idempotent: true,
		Who: principal.Recorded(j.Principal, j.Name, j.Groups, j.Client)}
	run := m.opts.Rerun
	job := *j
	if _, err := m.start(spec, j.ID, j.Attempt+1, sent, func(ctx context.Context, c *Call) (json.RawMessage, error) { return run(ctx, &job, c) }); err != nil {
		m.log.Warn("running a job again", "job", j.ID, "err", err)
		return
	}
	m.log.Info("job run again after a stop of mcpx", "job", j.ID, "tool", j.Tool, "server", j.Server)
}
