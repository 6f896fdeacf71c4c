package jobs

import (
	"context"
	"time"

	"mcpx/internal/relay"
	"mcpx/internal/store"
)

// Holding a job, in time. Each write that gives this manager a job's
// lease (the insert of its row, a claim, a renewal) makes the lease last
// a term from when the store took it, which is after the manager sent
// it. The manager holds the job for a term less a margin from when it
// SENT that write, by its own monotonic clock: the write's time in
// flight, however long, is counted against the hold, never added to it.
// When its hold runs out with no renewal answered, the call of an
// idempotent job ends (relay.LeaseLost), since another replica may run
// it again; and so does one whose renewal the store answered without it
// (another replica took the job). Another replica takes a job only once
// its lease has lapsed for a grace of a third of a term by the store's
// clock, so between the holder's end of the call and the earliest start
// elsewhere there are at least margin + grace (half a term): time for the
// cancel to reach the upstream. Nothing here waits on the store while
// holding the manager's lock, so no write in flight can delay an end.

// margin is how long before a term has passed, since this manager sent
// the write that gave or renewed a lease, it gives the job up.
func (m *Manager) margin() time.Duration { return m.opts.LeaseTerm / 6 }

// holdFor is how long a write that gives or renews a lease lets this
// manager hold the job, from when it sent it: a term less the margin. It
// also bounds the insert of a job's row: an answer after it is of no use.
func (m *Manager) holdFor() time.Duration { return m.opts.LeaseTerm - m.margin() }

// fenced reports whether c ends when its hold runs out: its tool is
// idempotent, so another replica may run it again once its lease has
// lapsed (the others run on: nobody runs them again, and their end is
// kept as the job's late end), and the store is shared.
func (m *Manager) fenced(c *Call) bool {
	return c.spec.Idempotent && !m.opts.Exclusive && !m.unfenced
}

// Why an idempotent call's hold ran out.
const (
	heldTooLong    = "the job store did not answer a renewal of it in time"
	createUnknown  = "the job store did not answer the write of its job, which may have been made and found by another mcpx"
	takenElsewhere = "the job store no longer has this mcpx's lease on it: another mcpx took it"
)

// holdLocked extends c's hold to sent + holdFor (never shortens it), and
// arms the timer that ends a fenced call then, with why.
func (m *Manager) holdLocked(c *Call, sent time.Time, why string) {
	until := sent.Add(m.holdFor())
	if !until.After(c.held) {
		return
	}
	c.held, c.lapseWhy = until, why
	if c.ended || !m.fenced(c) {
		return
	}
	if c.lapse == nil {
		c.lapse = time.AfterFunc(time.Until(until), func() { m.lapsed(c) })
		return
	}
	c.lapse.Reset(time.Until(until))
}

// lapsed ends c if its hold has run out, once, counting it.
func (m *Manager) lapsed(c *Call) {
	m.mu.Lock()
	due := !c.ended && !c.lapsedOut && !time.Now().Before(c.held)
	if due {
		c.lapsedOut = true
		m.lapses++
	}
	why := c.lapseWhy
	m.mu.Unlock()
	if due {
		c.cancel(&relay.Cause{Kind: relay.LeaseLost, Detail: why})
	}
}

// held is a job call a renewal was sent for.
type held struct {
	id string
	c  *Call
}

// renewed extends the hold of the calls the store renewed (sent is when
// the renewal was sent) and deals with those it did not: a job cancelled
// meanwhile ends its call with the cancel's cause; one another owner took
// ends an idempotent call at once, and leaves another to run on (its end
// is kept as the job's late end).
func (m *Manager) renewed(ctx context.Context, sent time.Time, sentFor []held, ids []string) {
	got := make(map[string]bool, len(ids))
	for _, id := range ids {
		got[id] = true
	}
	var missing []held
	m.mu.Lock()
	for _, h := range sentFor {
		switch {
		case got[h.id]:
			m.holdLocked(h.c, sent, heldTooLong)
		case !h.c.ended:
			missing = append(missing, h)
		}
	}
	m.mu.Unlock()
	for _, h := range missing {
		m.writes.Add(1) // a read, counted with the store's calls
		j, err := m.st.Get(ctx, "", h.id)
		switch {
		case err == nil && j.Status == store.Cancelled:
			m.cancelled(h.id, j.Error)
			continue
		case err == nil && j.Status == store.Running && j.Lease() == h.c.lease():
			continue // still its own (a race with the renewal): its hold decides
		}
		m.mu.Lock()
		h.c.taken = true // not renewed again, nor said again
		m.mu.Unlock()
		if m.fenced(h.c) {
			m.log.Warn("a job's lease was not renewed: its idempotent call ends, for another mcpx may run it again", "job", h.id, "err", err)
			h.c.cancel(&relay.Cause{Kind: relay.LeaseLost, Detail: takenElsewhere})
			continue
		}
		m.log.Warn("a job's lease was not renewed: its call runs on, and its end will be kept as the job's late result", "job", h.id, "err", err)
	}
}
