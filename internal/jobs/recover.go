package jobs

import (
	"context"
	"encoding/json"
	"time"

	"mcpx/internal/store"
)

// What a job that a restart ran again, or closed, says of it.
const (
	rerunNote       = "mcpx stopped while this call ran; the tool is marked idempotent, so it was run again once"
	interruptedWhy  = "mcpx stopped while this call ran; it was not run again, because the tool is not marked idempotent and running it twice could do the work twice"
	secondFailedWhy = "mcpx stopped while this call ran, for the second time; it was run again once already and is not run a third time"
)

// recover deals with the orphans it finds: each is closed as
// interrupted, or claimed and run again once if it is idempotent.
func (m *Manager) recover(ctx context.Context) {
	lapsed := time.Now()
	if m.opts.Exclusive {
		lapsed = time.Unix(1<<40, 0) // every other owner's: none can be alive
	}
	orphans, err := m.st.Orphans(ctx, m.owner, lapsed)
	if err != nil {
		m.log.Warn("finding orphaned jobs", "err", err)
		return
	}
	for _, j := range orphans {
		m.adopt(ctx, j)
	}
}

func (m *Manager) adopt(ctx context.Context, j *store.Job) {
	rerun := j.Idempotent && m.opts.Rerun != nil && j.Attempt == 1
	note := j.Note
	if rerun {
		note = rerunNote
	}
	m.writes.Add(1)
	ok, err := m.st.Claim(ctx, j.ID, m.owner, j.LeaseUntil, time.Now().Add(m.opts.LeaseTerm), note)
	if err != nil || !ok {
		return // another owner took it, or it ended meanwhile
	}
	if !rerun {
		why := interruptedWhy
		if j.Idempotent && j.Attempt > 1 {
			why = secondFailedWhy
		}
		m.writes.Add(1)
		if _, err := m.st.Finish(ctx, j.ID, m.owner, store.Interrupted, nil, why); err != nil {
			m.log.Warn("closing an interrupted job", "job", j.ID, "err", err)
		}
		m.log.Info("job interrupted by a stop of mcpx", "job", j.ID, "tool", j.Tool, "server", j.Server)
		return
	}
	spec := Spec{Principal: j.Principal, Server: j.Server, Tool: j.Tool, Params: j.Params, Key: j.Key, Idempotent: true}
	run := m.opts.Rerun
	job := *j
	if _, err := m.start(spec, j.ID, func(ctx context.Context, c *Call) (json.RawMessage, error) { return run(ctx, &job, c) }); err != nil {
		m.log.Warn("running a job again", "job", j.ID, "err", err)
		return
	}
	m.log.Info("job run again after a stop of mcpx", "job", j.ID, "tool", j.Tool, "server", j.Server)
}
