package jobs

import (
	"context"
	"fmt"
	"time"

	"mcpx/internal/store"
)

// Leases, in time: an owner renews its jobs' leases every third of a
// term, each renewal bounded by a third of a term (a store cut off
// without a reset would hold it forever). Once no renewal it sent in the
// last term less the margin has been answered, it knows its leases may
// lapse: it says so, and the calls of its idempotent jobs end (hold.go),
// which another replica may run again. Another replica takes a job only
// once its lease has lapsed for a grace of a third of a term by the
// store's clock, and a lease the store gave at a renewal ends a term
// after the store took it, which is after the owner sent it: the owner
// gives up before any other may take its job (renewal deadline < term -
// margin < term + grace).

// grace is how long after a lease lapsed, by the store's clock, another
// replica may take its job: time for its owner, which knew it lost the
// lease when it lapsed, to end its call.
func (m *Manager) grace() time.Duration { return m.opts.LeaseTerm / 3 }

// writeDeadline bounds a write of a job's progress or end: one the store
// does not answer in time is tried again later (it is fenced: late is
// never wrong).
func (m *Manager) writeDeadline() time.Duration { return max(m.opts.LeaseTerm, time.Second) }

// LeaseState is whether this manager holds its jobs' leases.
type LeaseState struct {
	// Lost: no renewal was answered for a lease term less its margin
	// (hold.go): another replica may soon take this one's jobs.
	Lost bool
	// Since is when the store last answered a renewal (zero before the
	// first).
	Since time.Time
	// Err is why the last renewal failed (nil if it did not).
	Err error
	// Skew is how far this machine's clock is ahead of the store's
	// (behind if negative), as the last renewal measured it; zero for a
	// store that is this machine's.
	Skew time.Duration
	// Exclusive: no other manager uses the store (Options.Exclusive), so
	// none takes this one's jobs when it loses their leases.
	Exclusive bool
}

// Leases returns whether this manager holds its jobs' leases.
func (m *Manager) Leases() LeaseState {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.leases
	l.Exclusive = m.opts.Exclusive
	return l
}

// renewal is what one renewal found.
type renewal struct {
	sent time.Time
	err  error
	skew time.Duration // 0 when not measured
}

// keepLeases renews the leases of this manager's jobs until ctx ends,
// notes when they are lost and regained, and looks for orphans once the
// store has answered for a whole term.
func (m *Manager) keepLeases(ctx context.Context) {
	term := m.opts.LeaseTerm
	tick := time.NewTicker(term / 3)
	defer tick.Stop()
	loss := time.NewTimer(m.holdFor()) // the leases given at start last a term from after now
	defer loss.Stop()
	// A renewal and a search for orphans run on goroutines of their own,
	// each bounded, one at a time: a store that does not answer never
	// holds up the loss timer.
	renewed := make(chan renewal, 1)
	recovered := make(chan struct{}, 1)
	renewing, recovering := false, false
	var reachedSince time.Time // the store answered every renewal since
	for {
		select {
		case <-tick.C:
			if renewing {
				continue // its deadline ends it
			}
			if m.quiet() {
				// Nothing to renew nor to look for: the store is not
				// touched, and nothing can be lost until a job starts
				// (its row comes with a lease of a term).
				loss.Reset(m.holdFor())
				continue
			}
			renewing = true
			go func() { renewed <- m.renew(ctx) }()
		case r := <-renewed:
			renewing = false
			if r.err != nil {
				if prev := m.Leases().Err; prev == nil || prev.Error() != r.err.Error() {
					m.log.Warn("renewing job leases", "err", r.err) // once while the reason holds
				}
				reachedSince = time.Time{}
				m.noteRenewal(r, false)
				continue
			}
			loss.Reset(time.Until(r.sent.Add(m.holdFor())))
			m.noteRenewal(r, true)
			if reachedSince.IsZero() {
				reachedSince = r.sent
			}
			if !m.opts.Exclusive && !recovering && time.Since(reachedSince) >= term {
				recovering = true
				go func() {
					rctx, cancel := context.WithTimeout(ctx, term)
					defer cancel()
					m.recover(rctx)
					recovered <- struct{}{}
				}()
			}
		case <-recovered:
			recovering = false
		case <-loss.C:
			m.leasesLost()
		case <-ctx.Done():
			if renewing {
				<-renewed
			}
			if recovering {
				<-recovered
			}
			return
		}
	}
}

// quiet reports whether a renewal has nothing to do: the store is this
// manager's alone (no orphans of others to look for) and no replica's
// heartbeat is asked of it, it holds no job (none running, no end
// waiting to be written), and the store answered the last renewal. An
// idle daemon then leaves its store alone. A store that fails
// meanwhile is found by the next job, whose start it refuses.
func (m *Manager) quiet() bool {
	if !m.opts.Exclusive || m.replicas() != nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byID) == 0 && len(m.unwritten) == 0 && m.leases.Err == nil && !m.leases.Lost
}

// renew renews the leases of the jobs this manager runs, and writes its
// heartbeat, within a third of a term.
func (m *Manager) renew(ctx context.Context) renewal {
	sent := time.Now()
	ctx, cancel := context.WithTimeout(ctx, m.opts.LeaseTerm/3)
	defer cancel()
	m.mu.Lock()
	ids := make([]string, 0, len(m.byID)+len(m.unwritten))
	calls := make([]held, 0, len(m.byID))
	for id, c := range m.byID {
		if c.taken {
			continue // another's now: its end is kept as a late one
		}
		ids = append(ids, id)
		calls = append(calls, held{id, c})
	}
	for id := range m.unwritten { // ended, its end not written yet: still held
		ids = append(ids, id)
	}
	m.mu.Unlock()
	m.writes.Add(1)
	got, err := m.st.Renew(ctx, m.owner, ids, m.opts.LeaseTerm)
	r := renewal{sent: sent, err: err}
	if err != nil {
		return r
	}
	m.renewed(ctx, sent, calls, got)
	if c, ok := m.st.(store.Clock); ok {
		before := m.opts.Clock()
		if now, err := c.Now(ctx); err == nil {
			after := m.opts.Clock()
			r.skew = before.Add(after.Sub(before) / 2).Sub(now).Round(time.Millisecond)
		}
	}
	m.beat(ctx)
	return r
}

// noteRenewal records a renewal's outcome, and says once that the leases
// are held again after they were lost.
func (m *Manager) noteRenewal(r renewal, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.leases.Err = r.err
	if !ok {
		return
	}
	if far, was := skewed(r.skew, m.opts.LeaseTerm), skewed(m.leases.Skew, m.opts.LeaseTerm); far && !was {
		m.log.Warn("this machine's clock is off the job store's: leases and the times the store keeps follow the store's clock, so jobs are safe, but the times this mcpx shows of its own (a running call's start) are off as much",
			"ahead by", r.skew)
	} else if was && !far {
		m.log.Info("this machine's clock keeps to the job store's again", "ahead by", r.skew)
	}
	m.leases.Skew = r.skew
	switch {
	case m.leases.Lost && m.leases.Since.IsZero():
		m.log.Info("holding its job leases: the job store answers for the first time since this mcpx started")
	case m.leases.Lost:
		m.log.Info("holding its job leases again: the job store answers", "lost for", time.Since(m.leases.Since).Round(time.Millisecond))
	}
	m.leases.Lost, m.leases.Since, m.lapses = false, r.sent, 0
}

// leasesLost: no renewal was answered for a term less the margin. The
// replica says so, once; the calls of its idempotent jobs end as their
// holds run out (hold.go): now, for those the last renewal answered,
// which another replica may run again once their leases have lapsed for
// the grace. The other calls run on (running them again could do their
// work twice), and their ends are written once the store answers: as the
// job's end if no other replica took it, else as its late end
// (KeepLate). An exclusive store has no other user: nothing is ended.
func (m *Manager) leasesLost() {
	m.mu.Lock()
	if m.leases.Lost {
		m.mu.Unlock()
		return
	}
	m.leases.Lost = true
	err := m.leases.Err
	var ended []*Call
	now := time.Now()
	for _, c := range m.byID {
		if m.fenced(c) && !c.ended && !now.Before(c.held) {
			ended = append(ended, c)
		}
	}
	m.mu.Unlock()
	for _, c := range ended {
		m.lapsed(c) // their own timers, due now, may come first
	}
	m.mu.Lock()
	n := m.lapses
	m.mu.Unlock()
	args := []any{"term", m.opts.LeaseTerm, "idempotent calls ended", n}
	if err != nil {
		args = append(args, "err", err)
	}
	m.log.Warn("this mcpx lost its job leases: the job store has not answered a renewal for a lease term less its margin", args...)
}

// lease is the lease c runs under.
func (c *Call) lease() store.Lease { return store.Lease{Owner: c.m.owner, Attempt: c.attempt} }

// skewed reports whether a clock skew is worth saying: more than a third
// of a lease term, or a second.
func skewed(d, term time.Duration) bool { return d.Abs() > max(term/3, time.Second) }

// settle writes a job's end under the lease its call ran under. If
// another owner took the job meanwhile (this replica lost its lease while
// the call ran on), the store refuses it, and the end is kept as the
// job's late end instead, with a note that says what happened: a result
// an upstream produced is never dropped in silence. A job cancelled
// meanwhile keeps its cancel.
func (m *Manager) settle(ctx context.Context, id string, e ending) error {
	m.writes.Add(1)
	ok, err := m.st.Finish(ctx, id, e.lease, e.to, e.res, e.errText)
	if err != nil || ok {
		return err
	}
	j, err := m.st.Get(ctx, "", id)
	switch {
	case IsIDError(err):
		return nil
	case err != nil:
		return err
	case j.Attempt <= e.lease.Attempt:
		return nil // cancelled meanwhile: the cancel wins
	}
	note := fmt.Sprintf("Attempt %d of this call went on at the mcpx that lost its lease (%s) and ended there at %s as %s: that end is kept with the job as its late result.",
		e.lease.Attempt, m.owner, e.at.UTC().Format(time.RFC3339), e.to)
	m.writes.Add(1)
	if _, err := m.st.KeepLate(ctx, id, e.lease, e.to, e.res, e.errText, note); err != nil {
		return err
	}
	m.log.Warn("a job's call ended after another mcpx took the job: its end is kept as the job's late result", "job", id, "status", e.to, "attempt", e.lease.Attempt)
	return nil
}
