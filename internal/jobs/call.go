package jobs

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"mcpx/internal/audit"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
	"mcpx/internal/store"
)

// Spec is what a job keeps of its call.
type Spec struct {
	Principal string
	Server    string
	Tool      string
	// Params are the upstream tools/call params, kept to run the call
	// again after a restart when Idempotent.
	Params     json.RawMessage
	Key        string // see Key
	Idempotent bool
	// Describe, if set, fills in what a job keeps of its call when the
	// call becomes one (Params, Key, Idempotent): a call that never does
	// pays nothing for them. It runs on Promote's goroutine.
	Describe func(*Spec)
	// Who is the principal the job is for, as the face that started it
	// decided (for a stored job run again, as the store kept it:
	// principal.Recorded), for the audit log.
	Who principal.Principal
	// started: it came in Now (or Relayed), a job from the start
	// (job.start), not at its host's timer (job.promote).
	started bool
}

// Progress is a call's last progress.
type Progress struct {
	Progress float64  `json:"progress"`
	Total    *float64 `json:"total,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// Call is one relayed call that may become a job. Its fields are the
// manager's; the methods are safe for concurrent use.
type Call struct {
	m      *Manager
	spec   Spec
	cancel context.CancelCauseFunc
	done   chan struct{}
	res    json.RawMessage // set before done closes
	err    error
	Start  time.Time
	// began is when it began on this process's monotonic clock: the
	// store stamps the job's start with its own clock less the time since.
	began time.Time
	// attempt is the job's attempt this call runs (1 unless it runs a
	// claimed orphan again): with the manager's owner, its lease.
	attempt int

	promoting sync.Mutex // held by Promote

	// guarded by m.mu
	id       string // set once it is a job
	progress Progress
	moved    bool // progress has been reported
	ended    bool // end has taken the result: too late to promote
	after    []func()
	// writing, while Promote writes the job's row, is closed once it
	// has: the call's end is written after it.
	writing chan struct{}
	// held is until when this manager may run the job (hold.go), on its
	// monotonic clock; lapse ends a fenced call then, with lapseWhy.
	held      time.Time
	lapse     *time.Timer
	lapseWhy  string
	lapsedOut bool // ended when its hold ran out
	// taken: a renewal found the job's lease no longer this manager's.
	taken bool
}

// start starts run; for a stored job (id set), claimed by a write sent
// at claimed, as attempt.
func (m *Manager) start(spec Spec, id string, attempt int, claimed time.Time, run func(ctx context.Context, c *Call) (json.RawMessage, error)) (*Call, error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	c := &Call{m: m, spec: spec, cancel: cancel, done: make(chan struct{}), Start: m.opts.Clock(), began: time.Now(), id: id, attempt: attempt}
	m.mu.Lock()
	if !m.running {
		m.mu.Unlock()
		cancel(nil)
		return nil, ErrStopped
	}
	m.live[c] = struct{}{}
	if id != "" {
		m.njobs.Add(1)
		m.byID[id] = c
		m.byKey[spec.Principal+"\x00"+spec.Key] = c
		m.holdLocked(c, claimed, heldTooLong)
	}
	m.calls.Add(1)
	if id != "" {
		m.opts.Observer.JobStarted(spec.Server, spec.Tool)
	}
	m.mu.Unlock()
	go func() {
		defer m.calls.Done()
		res, err := run(ctx, c)
		cancel(nil)
		c.end(res, err)
	}()
	return c, nil
}

// CancelFunc returns the function that ends the call's context: the
// relay's call.Cancel, so that the call's timers end it directly.
func (c *Call) CancelFunc() context.CancelCauseFunc { return c.cancel }

// Done is closed once the call has ended (and, if it was a job, its end
// is written).
func (c *Call) Done() <-chan struct{} { return c.done }

// Result returns the call's result or error, once Done.
func (c *Call) Result() (json.RawMessage, error) { return c.res, c.err }

// ID returns the job's id, "" while the call is not a job.
func (c *Call) ID() string {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return c.id
}

// Spec returns what the call was started with.
func (c *Call) Spec() Spec {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return c.spec
}

// SetProgress notes the call's progress; a job's is written at the next
// flush. It never blocks on the store.
func (c *Call) SetProgress(p Progress) {
	m := c.m
	m.mu.Lock()
	c.progress, c.moved = p, true
	job := c.id != ""
	if job {
		m.dirty[c] = struct{}{}
	}
	m.mu.Unlock()
	if job {
		m.opts.Observer.JobProgressed()
	}
}

// ClearProgress forgets the call's progress, as if none had been noted:
// a note that was never the call's own (mcpx's "waiting for its host")
// is over, and the call had reported none. A job's is cleared in the
// store at the next flush.
func (c *Call) ClearProgress() {
	m := c.m
	m.mu.Lock()
	c.progress, c.moved = Progress{}, false
	if c.id != "" {
		m.dirty[c] = struct{}{}
	}
	m.mu.Unlock()
}

// LastProgress returns the last progress noted, and whether there was any.
func (c *Call) LastProgress() (Progress, bool) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return c.progress, c.moved
}

func (c *Call) progressJSON() []byte {
	c.m.mu.Lock()
	p, moved := c.progress, c.moved
	c.m.mu.Unlock()
	if !moved {
		return nil
	}
	b, _ := json.Marshal(p)
	return b
}

// Cancel ends the call with cause, job or not (its host's explicit
// cancel of a request it never had an answer to).
func (c *Call) Cancel(cause error) { c.cancel(cause) }

// CancelUnlessJob ends the call with cause unless it has become a job
// (whose life is no longer the host request's); it reports whether it
// did.
func (c *Call) CancelUnlessJob(cause error) bool {
	c.m.mu.Lock()
	writing := c.writing
	c.m.mu.Unlock()
	if writing != nil {
		<-writing // a job once its row is written, or not (bounded: holdFor)
	}
	c.m.mu.Lock()
	job := c.id != ""
	c.m.mu.Unlock()
	if !job {
		c.cancel(cause)
	}
	return !job
}

// Promote makes the call a job, written to the store before it returns,
// and returns its id. ok is false when the call ended first: its result
// is there to deliver.
func (c *Call) Promote(ctx context.Context) (id string, ok bool, err error) {
	m := c.m
	c.promoting.Lock() // one Promote at a time: Describe runs once
	defer c.promoting.Unlock()
	m.mu.Lock()
	id, ended := c.id, c.ended
	m.mu.Unlock()
	switch {
	case id != "":
		return id, true, nil
	case ended:
		return "", false, nil
	}
	if err := m.open(ctx); err != nil {
		return "", false, err
	}
	m.mu.Lock()
	spec := c.spec
	m.mu.Unlock()
	if spec.Describe != nil {
		spec.Describe(&spec) // outside m.mu: it may ask an upstream for its tools
		spec.Describe = nil
	}
	m.mu.Lock()
	if c.ended {
		m.mu.Unlock()
		return "", false, nil
	}
	c.spec = spec
	j := &store.Job{
		ID: NewID(), Principal: c.spec.Principal, Server: c.spec.Server, Tool: c.spec.Tool, Key: c.spec.Key,
		Params: c.spec.Params, Idempotent: c.spec.Idempotent, Status: store.Running, Owner: m.owner,
		Attempt: c.attempt, Created: c.began,
	}
	if who := c.spec.Who; !who.IsZero() {
		j.Name, j.Groups, j.Client = who.Name(), who.Groups(), who.Client()
	}
	if c.moved {
		j.Progress, _ = json.Marshal(c.progress)
	}
	written := make(chan struct{})
	c.writing = written // the call's end waits for the row
	m.mu.Unlock()
	defer close(written)
	// Not under m.mu: nothing of the manager's (a lease's loss above all)
	// waits on the store. The lease the row gives is held from now for
	// holdFor, which also bounds the write: an answer after it is of no
	// use.
	sent := time.Now()
	wctx, cancel := context.WithTimeout(ctx, m.holdFor())
	m.writes.Add(1)
	err = m.st.Create(wctx, j, m.opts.LeaseTerm)
	cancel()
	m.mu.Lock()
	defer m.mu.Unlock()
	c.writing = nil
	if err != nil {
		// The row may have been written all the same (the store took the
		// insert, its answer was lost): a fenced call goes on for as long
		// as that lease would be held, no longer.
		m.holdLocked(c, sent, createUnknown)
		return "", false, err
	}
	c.id = j.ID
	m.njobs.Add(1)
	m.byID[c.id] = c
	m.byKey[c.spec.Principal+"\x00"+c.spec.Key] = c
	m.holdLocked(c, sent, heldTooLong)
	if c.moved {
		m.dirty[c] = struct{}{} // it may have moved during the write
	}
	// Under m.mu, before the call's end (which waits for written): the
	// job's end is heard after its start.
	m.opts.Observer.JobStarted(c.spec.Server, c.spec.Tool)
	m.record(c, jobStartKind(c.spec), c.id, "running", "", nil)
	return c.id, true, nil
}

// end records the call's end: for a job, its row.
func (c *Call) end(res json.RawMessage, err error) {
	m := c.m
	m.mu.Lock()
	c.res, c.err, c.ended = res, err, true
	writing := c.writing
	m.mu.Unlock()
	if writing != nil {
		<-writing // its row first (bounded: holdFor)
	}
	m.mu.Lock()
	if c.lapse != nil {
		c.lapse.Stop()
	}
	id := c.id
	delete(m.live, c)
	delete(m.dirty, c)
	if id != "" {
		m.njobs.Add(-1)
		if k := c.spec.Principal + "\x00" + c.spec.Key; m.byKey[k] == c {
			delete(m.byKey, k)
		}
	}
	m.mu.Unlock()
	if id != "" {
		// Still in byID while its end is written: its lease is renewed,
		// and no recovery of this manager's takes it for an orphan.
		m.finish(c, id, res, err)
	}
	m.mu.Lock()
	if id != "" && m.byID[id] == c {
		delete(m.byID, id)
	}
	after := c.after
	c.after = nil
	m.mu.Unlock()
	close(c.done)
	for _, f := range after {
		f()
	}
}

// AfterEnd calls f once the call has ended and its end is written, on the
// goroutine that ended it (at once, on the caller's, if it has ended
// already). f must not block: it runs before the manager counts the call
// as gone.
func (c *Call) AfterEnd(f func()) {
	m := c.m
	m.mu.Lock()
	if !c.ended || c.after != nil {
		c.after = append(c.after, f)
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	<-c.done
	f()
}

// finish writes a job's end, and tells the observer.
func (m *Manager) finish(c *Call, id string, res json.RawMessage, err error) {
	status := m.writeEnd(c, id, res, err)
	m.opts.Observer.JobEnded(c.spec.Server, c.spec.Tool, string(status))
	took := time.Since(c.Start)
	m.record(c, audit.KindJobEnd, id, string(status), causeDetail(err), &took)
}

// writeEnd writes a job's end and returns the status it ended with.
func (m *Manager) writeEnd(c *Call, id string, res json.RawMessage, err error) store.Status {
	ctx, cancel := context.WithTimeout(context.Background(), m.writeDeadline())
	defer cancel()
	if cause, ok := relay.CauseOf(err); ok {
		switch cause.Kind {
		case relay.Stopping:
			// Left running, its lease released by stop: the next
			// start closes it as interrupted, or runs it again.
			if p := c.progressJSON(); p != nil {
				m.write(func() error { _, err := m.st.SetProgress(ctx, id, c.lease(), p); return err })
			}
			return store.Interrupted
		case relay.LeaseLost:
			// Left running, its lease not renewed: once it has lapsed
			// another replica (or this one) runs it again.
			return store.Interrupted
		case relay.JobCancelled:
			return store.Cancelled // CancelJob wrote it
		case relay.HostCancelled, relay.HostDisconnected, relay.ClientDisconnected:
			m.writes.Add(1)
			if _, err := m.st.Cancel(ctx, id, cause.Error()); err != nil {
				m.log.Warn("writing a job's cancel", "job", id, "err", err)
			}
			return store.Cancelled
		}
	}
	e := ending{lease: c.lease(), to: store.Completed, res: res, at: time.Now()}
	switch {
	case err != nil:
		// The error as a host of the call would have had it, code and
		// all, is the failed job's result.
		rpcErr, _ := relay.RPCError(err, c.spec.Server)
		e.to, e.res, e.errText = store.Failed, jsonrpc.MustMarshal(rpcErr), err.Error()
	case int64(len(res)) > m.opts.MaxResultBytes:
		lim := &store.LimitError{Limit: "mcpx.jobs.maxResultBytes", Max: m.opts.MaxResultBytes, Got: int64(len(res))}
		e.to, e.res, e.errText = store.Failed, nil, "the result was not kept: "+lim.Error()
	}
	if p := c.progressJSON(); p != nil {
		m.write(func() error { _, err := m.st.SetProgress(ctx, id, c.lease(), p); return err })
	}
	if err := m.settle(ctx, id, e); err != nil {
		// The store is down: the end is kept and written again at each
		// flush until it is (the job stays running, under this owner's
		// lease, meanwhile).
		m.log.Warn("writing a job's end; trying again", "job", id, "err", err)
		m.mu.Lock()
		m.unwritten[id] = e
		m.mu.Unlock()
	}
	return e.to
}

// ending is a job's end that the store did not take yet.
type ending struct {
	lease   store.Lease
	to      store.Status
	res     json.RawMessage
	errText string
	at      time.Time // when the call ended
}

// writeEndings writes again the ends the store did not take.
func (m *Manager) writeEndings(ctx context.Context) {
	m.mu.Lock()
	todo := make(map[string]ending, len(m.unwritten))
	for id, e := range m.unwritten {
		todo[id] = e
	}
	m.mu.Unlock()
	for id, e := range todo {
		if err := m.settle(ctx, id, e); err != nil {
			return // still down: the next flush tries again
		}
		m.mu.Lock()
		delete(m.unwritten, id)
		m.mu.Unlock()
		m.log.Info("wrote a job's end after the store came back", "job", id)
	}
}

// HasJobs reports whether any job of this manager's is running: until
// one is, no call can be a retry to attach.
func (m *Manager) HasJobs() bool {
	return m.njobs.Load() > 0
}
