package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/relay"
	"mcpx/internal/store"
)

// faulty is a real SQLite store whose answers a test delays, withholds
// or loses: the seam where a test plays a store cut off from a replica
// while another replica still reaches it (the same file, unwrapped).
type faulty struct {
	*store.SQLite
	mu          sync.Mutex
	renewDelay  time.Duration // each renewal is answered this late
	renewStall  bool          // renewals are not answered (until their deadline)
	createStall bool          // inserts are not answered
	createLost  bool          // inserts are made, their answer lost
	createDelay time.Duration // inserts are answered this late
	slowStart   bool          // searches for orphans and expiries are not answered
	answered    []time.Time   // when each answered renewal was sent
}

func (f *faulty) Renew(ctx context.Context, owner string, ids []string, term time.Duration) ([]string, error) {
	sent := time.Now()
	f.mu.Lock()
	delay, stall := f.renewDelay, f.renewStall
	f.mu.Unlock()
	if stall {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	time.Sleep(delay)
	got, err := f.SQLite.Renew(ctx, owner, ids, term)
	if err == nil {
		f.mu.Lock()
		f.answered = append(f.answered, sent)
		f.mu.Unlock()
	}
	return got, err
}

func (f *faulty) Create(ctx context.Context, j *store.Job, term time.Duration) error {
	f.mu.Lock()
	stall, lost, delay := f.createStall, f.createLost, f.createDelay
	f.mu.Unlock()
	time.Sleep(delay)
	switch {
	case stall:
		<-ctx.Done()
		return ctx.Err()
	case lost:
		if err := f.SQLite.Create(context.WithoutCancel(ctx), j, term); err != nil {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	}
	return f.SQLite.Create(ctx, j, term)
}

func (f *faulty) Orphans(ctx context.Context, lapsedFor time.Duration) ([]*store.Job, error) {
	f.mu.Lock()
	stall := f.slowStart
	f.mu.Unlock()
	if stall {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return f.SQLite.Orphans(ctx, lapsedFor)
}

func (f *faulty) Expire(ctx context.Context, keep, forget time.Duration) (int, error) {
	f.mu.Lock()
	stall := f.slowStart
	f.mu.Unlock()
	if stall {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return f.SQLite.Expire(ctx, keep, forget)
}

func (f *faulty) set(fn func(f *faulty)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// lastAnswered is when the last renewal the store answered was sent.
func (f *faulty) lastAnswered() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.answered) == 0 {
		return time.Time{}
	}
	return f.answered[len(f.answered)-1]
}

const holdTerm = 3 * time.Second

// logBuffer is a log's text, safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// sharedManager runs a manager over st, a store it shares (leases are
// taken by others), until the test ends; its log goes to log, if set.
func sharedManager(t *testing.T, st store.Store, rerun jobs.Runner, log ...*logBuffer) *jobs.Manager {
	t.Helper()
	opts := jobs.Options{Store: st, LeaseTerm: holdTerm, Rerun: rerun}
	if len(log) > 0 {
		opts.Logger = slog.New(slog.NewTextHandler(log[0], nil))
	}
	m := jobs.New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	wait(t, m.Started())
	t.Cleanup(func() { cancel(); <-done })
	return m
}

// openFaulty opens a faulty SQLite store in a fresh directory.
func openFaulty(t *testing.T) (*faulty, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jobs.db")
	st, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &faulty{SQLite: st}, path
}

// ended is a call's end: when, and its cause.
type ended struct {
	at  time.Time
	err error
}

// runUntilCancelled starts a job on m that runs until its context ends,
// and returns it with its end, once it has.
func runUntilCancelled(t *testing.T, m *jobs.Manager, idempotent bool, key string) (*jobs.Call, <-chan ended) {
	t.Helper()
	s := spec("alice")
	s.Idempotent, s.Key = idempotent, key
	out := make(chan ended, 1)
	c, err := m.Start(t.Context(), s, jobs.Now(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-ctx.Done()
		out <- ended{time.Now(), context.Cause(ctx)}
		return nil, context.Cause(ctx)
	}))
	if err != nil {
		t.Fatal(err)
	}
	return c, out
}

// leaseLost checks that e is a LeaseLost end that says why.
func leaseLost(t *testing.T, e ended, why string) {
	t.Helper()
	var c *relay.Cause
	if !errors.As(e.err, &c) || c.Kind != relay.LeaseLost || !strings.Contains(c.Error(), why) {
		t.Fatalf("the call ended with %v, want a lost lease saying %q", e.err, why)
	}
}

// A replica whose renewals stop being answered gives up its idempotent
// job's call strictly before a term has passed since it SENT the last
// renewal the store answered, however late that answer came: the lease
// the store gave runs from after the send, and a peer takes the job only
// a grace after it ran out. It says so once, counting the call it ended.
func TestHoldCountsFromTheSend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _ := openFaulty(t)
		var log logBuffer
		m := sharedManager(t, f, nil, &log)
		_, end := runUntilCancelled(t, m, true, "idem")
		f.set(func(f *faulty) { f.renewDelay = holdTerm / 4 }) // answered, late
		time.Sleep(holdTerm - holdTerm/30)                     // renewals sent at 1 and 2 s, answered at 1.75 and 2.75 s
		synctest.Wait()
		f.set(func(f *faulty) { f.renewStall = true })
		sent := f.lastAnswered()
		var e ended
		select {
		case e = <-end:
		case <-time.After(2 * holdTerm):
			t.Fatal("the idempotent call ran on two terms after its renewals stopped being answered")
		}
		if held := e.at.Sub(sent); held >= holdTerm || held <= holdTerm/4 {
			t.Fatalf("the call ended %v after the last answered renewal was sent (answered %v later), want within a term of %v", held, holdTerm/4, holdTerm)
		}
		leaseLost(t, e, "did not answer a renewal")
		synctest.Wait()
		if l := m.Leases(); !l.Lost {
			t.Fatalf("leases %+v after the call's hold ran out", l)
		}
		if n := strings.Count(log.String(), "lost its job leases"); n != 1 || !strings.Contains(log.String(), `"idempotent calls ended"=1`) {
			t.Fatalf("the log, once the hold ran out:\n%s", log.String())
		}
	})
}

// The insert of a job's row that the store does not answer holds up
// nothing: the replica still ends its idempotent job's call within the
// hold of its last renewal (a promotion's write used to hold the
// manager's lock, and with it the loss of the leases). In real time: a
// goroutine waiting for a lock never lets a synctest bubble's clock
// move. The promotion's caller gives it four terms, to bound the test.
func TestStalledPromoteHoldsNothing(t *testing.T) {
	f, _ := openFaulty(t)
	m := sharedManager(t, f, nil)
	_, end := runUntilCancelled(t, m, true, "idem")
	time.Sleep(holdTerm / 2)
	f.set(func(f *faulty) { f.renewStall, f.createStall = true, true })
	sent := f.lastAnswered()
	other := spec("alice")
	other.Key = "other"
	p, err := m.Start(context.Background(), other, jobs.Later(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}))
	if err != nil {
		t.Fatal(err)
	}
	promoted := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 4*holdTerm)
		defer cancel()
		_, _, err := p.Promote(ctx)
		promoted <- err
	}()
	select {
	case e := <-end:
		if held := e.at.Sub(sent); held >= holdTerm {
			t.Errorf("the call ended %v after the last answered renewal was sent, want within a term", held)
		}
		leaseLost(t, e, "did not answer a renewal")
	case <-time.After(2 * holdTerm):
		t.Error("the idempotent call ran on while a promotion's write went unanswered")
	}
	select {
	case err := <-promoted:
		if err == nil {
			t.Error("an unanswered insert made a job")
		}
	case <-time.After(2 * holdTerm):
		t.Error("the unanswered insert outlived the hold it would give")
	}
	p.Cancel(context.Canceled)
	wait(t, p.Done())
}

// A renewal the store answers without one of the jobs (another replica
// took it) ends that job's idempotent call at once, saying so; a job of
// another tool runs on, is not renewed again, and its end is kept as the
// job's late result.
func TestRenewalWithoutAJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _ := openFaulty(t)
		m := sharedManager(t, f, nil)
		ci, endI := runUntilCancelled(t, m, true, "idem")
		gate := make(chan struct{})
		s := spec("alice")
		s.Key = "plain"
		cp, err := m.Start(t.Context(), s, jobs.Now(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
			select {
			case <-gate:
				return json.RawMessage(`{"content":[]}`), nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(holdTerm / 2)
		synctest.Wait()
		// Another owner takes both, as a peer would once their leases
		// lapsed; here while this replica's renewals are answered.
		for _, id := range []string{ci.ID(), cp.ID()} {
			j, err := f.SQLite.Get(t.Context(), "", id)
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := f.SQLite.Claim(t.Context(), id, j.Lease(), "mcpx-peer", time.Hour, -24*time.Hour, "taken"); !ok || err != nil {
				t.Fatalf("claim: %v %v", ok, err)
			}
		}
		taken := time.Now()
		select {
		case e := <-endI:
			leaseLost(t, e, "another mcpx took it")
			if d := e.at.Sub(taken); d > holdTerm/3 {
				t.Fatalf("the idempotent call ended %v after its job was taken, want at the next renewal (%v)", d, holdTerm/3)
			}
		case <-time.After(2 * holdTerm):
			t.Fatal("the idempotent call ran on after another owner took its job")
		}
		time.Sleep(2 * holdTerm)
		synctest.Wait()
		select {
		case <-cp.Done():
			t.Fatal("the plain call ended when its job was taken")
		default:
		}
		close(gate)
		wait(t, cp.Done())
		j, err := f.SQLite.Get(t.Context(), "", cp.ID())
		if err != nil || j.Owner != "mcpx-peer" || j.Late == nil || j.Late.Status != store.Completed {
			t.Fatalf("the plain job after its call ended: %+v %v", j, err)
		}
	})
}

// An insert whose answer is lost may have made the row all the same: a
// peer may find its lease lapsed and run the call again. The replica that
// made it lets its idempotent call (which goes on as a plain one) run
// only as long as that lease would be held, so the peer's run never
// overlaps it. In real time: the store's clock, which leases follow,
// is the machine's.
func TestLostInsertHeldNoLonger(t *testing.T) {
	f, path := openFaulty(t)
	rerun := make(chan time.Time, 2)
	run := func(ctx context.Context, j *store.Job, c *jobs.Call) (json.RawMessage, error) {
		rerun <- time.Now()
		return json.RawMessage(`{"content":[]}`), nil
	}
	m := sharedManager(t, f, run) // either may find the row and run it
	peerStore, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peerStore.Close() })
	sharedManager(t, peerStore, run)
	f.set(func(f *faulty) { f.createLost = true })
	s := spec("alice")
	s.Idempotent = true
	end := make(chan ended, 1)
	c, err := m.Start(context.Background(), s, jobs.Later(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-ctx.Done()
		end <- ended{time.Now(), context.Cause(ctx)}
		return nil, context.Cause(ctx)
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*holdTerm) // bounds the test
	defer cancel()
	if _, _, err := c.Promote(ctx); err == nil {
		t.Fatal("a promotion whose answer was lost made a job")
	}
	var e ended
	select {
	case e = <-end:
	case <-time.After(4 * holdTerm):
		t.Fatal("the call whose job row may exist ran on past the lease that row gave")
	}
	leaseLost(t, e, "may have been made")
	select {
	case at := <-rerun:
		if !at.After(e.at) {
			t.Fatalf("the job was run again at %v, before the call ended at %v", at, e.at)
		}
	case <-time.After(4 * holdTerm):
		js, _ := f.SQLite.List(t.Context(), "", 0)
		for _, j := range js {
			t.Logf("%+v", j)
		}
		t.Fatal("nobody ran the job whose row was made")
	}
}

// A shared store that does not answer the start's search for orphans nor
// its expiry holds up the start a term at most, and the flushes of
// progress not at all once the expiry's deadline has passed.
func TestStalledStartHoldsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _ := openFaulty(t)
		f.set(func(f *faulty) { f.slowStart = true })
		m := jobs.New(jobs.Options{Store: f, LeaseTerm: holdTerm})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = m.Run(ctx) }()
		defer func() { cancel(); <-done }()
		select {
		case <-m.Started():
		case <-time.After(2 * holdTerm):
			t.Fatal("a manager whose store does not answer its search for orphans did not start in two terms")
		}
		c, _ := runUntilCancelled(t, m, false, "plain")
		defer c.Cancel(context.Canceled)
		c.SetProgress(jobs.Progress{Progress: 1, Message: "one"})
		time.Sleep(3 * holdTerm)
		synctest.Wait()
		j, err := f.SQLite.Get(t.Context(), "", c.ID())
		if err != nil || !strings.Contains(string(j.Progress), "one") {
			t.Fatalf("a job's progress, three terms after it moved: %+v %v", j, err)
		}
	})
}

// A job whose row was written while a renewal was on its way is not in
// that renewal: its hold, from the insert's send, runs out before the
// others', and its call ends first. The one line that says the leases
// are lost still counts it.
func TestLeaseLossCountsEveryEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _ := openFaulty(t)
		var log logBuffer
		m := sharedManager(t, f, nil, &log) // renewals at 1, 2, 3 s
		time.Sleep(holdTerm/3 - 100*time.Millisecond)
		f.set(func(f *faulty) { f.createDelay = 200 * time.Millisecond }) // sent at 0.9 s, answered at 1.1 s
		_, end := runUntilCancelled(t, m, true, "idem")
		time.Sleep(holdTerm / 6)
		f.set(func(f *faulty) { f.renewStall = true })
		select {
		case <-end:
		case <-time.After(2 * holdTerm):
			t.Fatal("the idempotent call ran on")
		}
		time.Sleep(holdTerm / 3)
		synctest.Wait()
		if !strings.Contains(log.String(), `"idempotent calls ended"=1`) {
			t.Fatalf("the log, once the leases were lost:\n%s", log.String())
		}
	})
}
