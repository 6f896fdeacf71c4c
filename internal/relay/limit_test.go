package relay

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// limitsVar is a limits function whose value a test can change, as a
// reload does.
type limitsVar struct {
	v atomic.Pointer[config.CallLimits]
}

func newLimitsVar(l config.CallLimits) *limitsVar {
	lv := &limitsVar{}
	lv.set(l)
	return lv
}
func (lv *limitsVar) set(l config.CallLimits)      { lv.v.Store(&l) }
func (lv *limitsVar) get(string) config.CallLimits { return *lv.v.Load() }
func (lv *limitsVar) limiter() *limiter            { return newLimiter(lv.get) }
func mustAcquire(t *testing.T, l *limiter, s string) func() {
	t.Helper()
	release, err := l.acquire(context.Background(), s)
	if err != nil {
		t.Fatalf("acquire(%q): %v", s, err)
	}
	return release
}

// queuedCall is an acquire running in its own goroutine.
type queuedCall struct {
	done    chan struct{}
	release func()
	err     error
}

func goAcquire(ctx context.Context, l *limiter, server string) *queuedCall {
	q := &queuedCall{done: make(chan struct{})}
	go func() {
		defer close(q.done)
		q.release, q.err = l.acquire(ctx, server)
	}()
	return q
}

func (q *queuedCall) finished() bool {
	select {
	case <-q.done:
		return true
	default:
		return false
	}
}

// waitQueued waits until server has n calls queued.
func waitQueued(t *testing.T, l *limiter, server string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for l.queued()[server] != n {
		if time.Now().After(deadline) {
			t.Fatalf("queued(%q) = %d, want %d", server, l.queued()[server], n)
		}
		time.Sleep(time.Millisecond)
	}
}

func wait(t *testing.T, q *queuedCall, what string) {
	t.Helper()
	select {
	case <-q.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return within 10s", what)
	}
}

func checkEmpty(t *testing.T, l *limiter) {
	t.Helper()
	if servers, active, queued := l.size(); servers+active+queued != 0 {
		t.Errorf("limiter holds %d servers, %d active, %d queued; want nothing left", servers, active, queued)
	}
}

// TestLimiterQueue: beyond the limit calls queue, and beyond the queue they
// fail at once with a *BusyError naming the server and its limits; slots
// that come free go to the queued calls oldest first; other servers are
// not affected.
func TestLimiterQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimitsVar(config.CallLimits{MaxConcurrentCalls: 2, QueueLength: 3}).limiter()
		r1, r2 := mustAcquire(t, l, "a"), mustAcquire(t, l, "a")
		var queued []*queuedCall
		for i := range 3 {
			queued = append(queued, goAcquire(context.Background(), l, "a"))
			waitQueued(t, l, "a", i+1) // in this order
		}
		start := time.Now()
		_, err := l.acquire(context.Background(), "a")
		var busy *BusyError
		if !errors.As(err, &busy) || !busy.Full || busy.Server != "a" || busy.Limits.MaxConcurrentCalls != 2 || busy.Limits.QueueLength != 3 || busy.Waited != 0 {
			t.Fatalf("acquire beyond the queue = %#v, want a full-queue *BusyError for a, 2 slots, queue of 3", err)
		}
		t.Logf("refused after %v: %v", time.Since(start), err)
		other := mustAcquire(t, l, "b") // another server has slots of its own

		// FIFO: each release admits the oldest waiter, and only it.
		r1()
		wait(t, queued[0], "the first queued call")
		if queued[1].finished() || queued[2].finished() {
			t.Fatal("one release admitted more than one queued call, or not the oldest")
		}
		r1()            // idempotent: no second slot
		synctest.Wait() // every goroutine is blocked: nobody else was admitted
		if queued[1].finished() {
			t.Fatal("a second release of the same slot admitted another call")
		}
		r2()
		wait(t, queued[1], "the second queued call")
		if queued[2].finished() {
			t.Fatal("the third queued call ran beyond the limit")
		}
		queued[0].release()
		wait(t, queued[2], "the third queued call")
		for _, q := range queued {
			if q.err != nil {
				t.Errorf("queued call: %v", q.err)
			}
		}
		queued[1].release()
		queued[2].release()
		other()
		checkEmpty(t, l)
	})
}

// TestLimiterQueueTimeout: a queued call fails with a *BusyError once it
// has waited the queue timeout, exactly (synctest's clock), and leaves
// the queue.
func TestLimiterQueueTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 150 * time.Millisecond
		l := newLimitsVar(config.CallLimits{MaxConcurrentCalls: 1, QueueLength: 5, QueueTimeout: timeout}).limiter()
		release := mustAcquire(t, l, "a")
		start := time.Now()
		_, err := l.acquire(context.Background(), "a")
		took := time.Since(start)
		var busy *BusyError
		if !errors.As(err, &busy) || busy.Full || busy.Waited != timeout {
			t.Fatalf("acquire = %#v, want a *BusyError after waiting %v", err, timeout)
		}
		if took != timeout {
			t.Errorf("acquire failed after %v, want the %v queue timeout", took, timeout)
		}
		if n := l.queued()["a"]; n != 0 {
			t.Errorf("%d calls still queued after the timeout", n)
		}
		release()
		checkEmpty(t, l)
	})
}

// TestLimiterNoQueue: a queue length of 0 refuses at once beyond the limit.
func TestLimiterNoQueue(t *testing.T) {
	l := newLimitsVar(config.CallLimits{MaxConcurrentCalls: 1, QueueTimeout: time.Hour}).limiter()
	release := mustAcquire(t, l, "a")
	_, err := l.acquire(context.Background(), "a")
	var busy *BusyError
	if !errors.As(err, &busy) || !busy.Full {
		t.Fatalf("acquire = %v, want a full-queue *BusyError", err)
	}
	release()
	checkEmpty(t, l)
}

// TestLimiterCancelWhileQueued: a caller that gives up while queued gets
// its context's cause at once, leaves the queue, and holds no slot; the
// calls behind it keep their places.
func TestLimiterCancelWhileQueued(t *testing.T) {
	l := newLimitsVar(config.CallLimits{MaxConcurrentCalls: 1, QueueLength: 5}).limiter()
	release := mustAcquire(t, l, "a")
	ctx, cancel := context.WithCancelCause(context.Background())
	first := goAcquire(ctx, l, "a")
	waitQueued(t, l, "a", 1)
	second := goAcquire(context.Background(), l, "a")
	waitQueued(t, l, "a", 2)

	cause := &Cause{Kind: HostCancelled, Detail: "changed my mind"}
	cancel(cause)
	wait(t, first, "the cancelled call")
	if first.err != cause || first.release != nil {
		t.Fatalf("cancelled while queued: err %v, release %v; want the cause and no slot", first.err, first.release != nil)
	}
	if n := l.queued()["a"]; n != 1 {
		t.Errorf("queued = %d after the cancel, want 1", n)
	}
	release()
	wait(t, second, "the call behind the cancelled one")
	if second.err != nil {
		t.Fatal(second.err)
	}
	second.release()
	checkEmpty(t, l)
}

// TestLimiterReload: limits are read at every decision. A raised limit
// admits queued calls at once (kick); a lowered one admits nobody until
// the calls in flight are below it; a removed limit admits everyone.
func TestLimiterReload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lv := newLimitsVar(config.CallLimits{MaxConcurrentCalls: 1, QueueLength: 10})
		l := lv.limiter()
		held := []func(){mustAcquire(t, l, "a")}
		var queued []*queuedCall
		for i := range 4 {
			queued = append(queued, goAcquire(context.Background(), l, "a"))
			waitQueued(t, l, "a", i+1)
		}

		lv.set(config.CallLimits{MaxConcurrentCalls: 3, QueueLength: 10})
		l.kick()
		wait(t, queued[0], "queued call 0 after the limit rose")
		wait(t, queued[1], "queued call 1 after the limit rose")
		if queued[2].finished() {
			t.Fatal("a raised limit of 3 admitted a fourth call")
		}
		held = append(held, queued[0].release, queued[1].release)

		lv.set(config.CallLimits{MaxConcurrentCalls: 1, QueueLength: 10})
		held[0]()
		held[1]()
		synctest.Wait() // every goroutine is blocked: nobody was admitted
		if queued[2].finished() {
			t.Fatal("a call was admitted with 1 in flight under a lowered limit of 1")
		}
		held[2]()
		wait(t, queued[2], "queued call 2 once below the lowered limit")

		lv.set(config.CallLimits{}) // no limit: the server was removed, say
		l.kick()
		wait(t, queued[3], "queued call 3 once the limit was removed")
		queued[2].release()
		queued[3].release()
		for range 100 { // and no limit for new calls
			defer mustAcquire(t, l, "a")()
		}
		if _, active, _ := l.size(); active != 100 {
			t.Errorf("active = %d, want 100 without a limit", active)
		}
	})
}

// TestLimiterConcurrent: many callers, random cancels and timeouts: the
// limit always holds, every call ends once, and nothing is left.
func TestLimiterConcurrent(t *testing.T) {
	const limit = 4
	l := newLimitsVar(config.CallLimits{MaxConcurrentCalls: limit, QueueLength: 20, QueueTimeout: 50 * time.Millisecond}).limiter()
	var running, peak atomic.Int64
	var ok, busy, cancelled atomic.Int64
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Go(func() {
			server := fmt.Sprint("s", i%3)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if rand.IntN(5) == 0 {
				time.AfterFunc(time.Duration(rand.IntN(5))*time.Millisecond, func() { cancel(&Cause{Kind: HostCancelled}) })
			}
			release, err := l.acquire(ctx, server)
			var be *BusyError
			switch {
			case err == nil:
				n := running.Add(1)
				// Per server at most limit; over 3 servers at most 3*limit.
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
				running.Add(-1)
				release()
				ok.Add(1)
			case errors.As(err, &be):
				busy.Add(1)
			default:
				if c, isCause := CauseOf(err); !isCause || c.Kind != HostCancelled {
					t.Errorf("acquire: %v", err)
				}
				cancelled.Add(1)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > 3*limit {
		t.Errorf("peak of %d calls holding slots, want at most %d", p, 3*limit)
	}
	if sum := ok.Load() + busy.Load() + cancelled.Load(); sum != 400 {
		t.Errorf("%d calls ended, want 400", sum)
	}
	t.Logf("ok %d, busy %d, cancelled %d, peak %d", ok.Load(), busy.Load(), cancelled.Load(), peak.Load())
	checkEmpty(t, l)
}

func TestBusyErrorText(t *testing.T) {
	lim := config.CallLimits{MaxConcurrentCalls: 4, QueueLength: 16, QueueTimeout: 30 * time.Second}
	tests := []struct {
		err  *BusyError
		want string
	}{
		{&BusyError{Server: "demo", Limits: lim, Full: true},
			`upstream "demo" is busy: all 4 of its call slots (maxConcurrentCalls) are taken and its queue of 16 (queueLength) is full; try again later`},
		{&BusyError{Server: "demo", Limits: config.CallLimits{MaxConcurrentCalls: 1}, Full: true},
			`upstream "demo" is busy: all 1 of its call slots (maxConcurrentCalls) are taken and it has no queue (queueLength 0); try again later`},
		{&BusyError{Server: "demo", Limits: lim, Waited: 30*time.Second + 2*time.Millisecond},
			`upstream "demo" is busy: all 4 of its call slots (maxConcurrentCalls) are taken and none came free while the call waited 30.002s in its queue (queueTimeout); try again later`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() =\n %s\nwant\n %s", got, tt.want)
		}
	}
}

// TestRPCErrorLimits: the limits' errors reach hosts as mcpx errors with
// their own codes and data.
func TestRPCErrorLimits(t *testing.T) {
	lim := config.CallLimits{MaxConcurrentCalls: 4, QueueLength: 16, QueueTimeout: time.Second}
	timedOut := &BusyError{Server: "demo", Limits: lim, Waited: 1500 * time.Millisecond}
	tests := []struct {
		name  string
		err   error // inner, perhaps wrapped
		inner error
		code  int64
		kind  string
		data  string
	}{
		{"queue full", &BusyError{Server: "demo", Limits: lim, Full: true}, nil, mcp.CodeBusy, "upstream_busy",
			`{"mcpx":{"kind":"upstream_busy","server":"demo","reason":"queue_full","limit":4,"queueLength":16,"waitedMs":0}}`},
		{"queue timeout", fmt.Errorf("x: %w", timedOut), timedOut, mcp.CodeBusy, "upstream_busy",
			`{"mcpx":{"kind":"upstream_busy","server":"demo","reason":"queue_timeout","limit":4,"queueLength":16,"waitedMs":1500}}`},
		{"host limit", &HostLimitError{Limit: 256}, nil, mcp.CodeHostLimit, "host_limit",
			`{"mcpx":{"kind":"host_limit","limit":256}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, kind := RPCError(tt.err, "")
			if got.Code != tt.code || kind != tt.kind {
				t.Errorf("code %d, kind %q; want %d, %q", got.Code, kind, tt.code, tt.kind)
			}
			inner := tt.inner
			if inner == nil {
				inner = tt.err
			}
			if got.Message != "mcpx: "+inner.Error() {
				t.Errorf("message %q, want mcpx: %s", got.Message, inner.Error())
			}
			want := jsonrpc.MustMarshal(decodeJSON(t, tt.data))
			if string(jsonrpc.MustMarshal(decodeJSON(t, string(got.Data)))) != string(want) {
				t.Errorf("data %s, want %s", got.Data, tt.data)
			}
		})
	}
}

// TestRegistryHostLimit: a host connection may register at most limit
// requests; a cancelled one still winding down counts until it is
// removed; other connections, and a limit of 0, are not affected.
func TestRegistryHostLimit(t *testing.T) {
	g := NewRegistry()
	nop := func(error) {}
	add := func(session, id string, limit int) (*Entry, error) {
		return g.AddLimited(HostKey{session, id}, "tools/call", nop, limit)
	}
	a, err := add("s1", "1", 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := add("s1", "2", 2); err != nil {
		t.Fatal(err)
	}
	_, err = add("s1", "3", 2)
	var hl *HostLimitError
	if !errors.As(err, &hl) || hl.Limit != 2 {
		t.Fatalf("third request of s1 = %v, want a *HostLimitError of 2", err)
	}
	if _, err := add("s1", "1", 2); !errors.Is(err, ErrDuplicateID) {
		t.Errorf("a duplicate id at the limit = %v, want ErrDuplicateID", err)
	}
	if _, err := add("s2", "1", 2); err != nil {
		t.Errorf("another connection: %v", err)
	}
	if got := g.SessionLen("s1"); got != 2 {
		t.Errorf("SessionLen(s1) = %d, want 2", got)
	}
	// Cancelled but not yet removed: still counts.
	g.CancelHost(a.Host, &Cause{Kind: HostCancelled})
	if _, err := add("s1", "3", 2); !errors.As(err, &hl) {
		t.Errorf("with a cancelled request still winding down = %v, want a *HostLimitError", err)
	}
	g.Remove(a)
	g.Remove(a) // idempotent: frees one place only
	if _, err := add("s1", "3", 2); err != nil {
		t.Errorf("after a request ended: %v", err)
	}
	if _, err := add("s1", "4", 2); !errors.As(err, &hl) {
		t.Errorf("a double Remove freed two places: %v", err)
	}
	for i := range 50 { // 0: no limit
		if _, err := add("s1", fmt.Sprint("u", i), 0); err != nil {
			t.Fatalf("limit 0: %v", err)
		}
	}
	for _, e := range g.Snapshot() {
		g.Remove(g.byID[e.ID])
	}
	if g.Len() != 0 || g.SessionLen("s1") != 0 || len(g.perSession) != 0 {
		t.Errorf("after removing all: Len %d, SessionLen(s1) %d, %d sessions counted; want 0", g.Len(), g.SessionLen("s1"), len(g.perSession))
	}
}
