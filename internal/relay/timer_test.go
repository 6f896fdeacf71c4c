package relay

// The call timer on synctest's clock: each timeout is met exactly, and
// no test waits for real time.

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// causeOf waits for ctx's end and returns its *Cause.
func causeOf(t *testing.T, ctx context.Context) *Cause {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the call timer never fired")
	}
	var c *Cause
	if !errors.As(context.Cause(ctx), &c) {
		t.Fatalf("cause %v, want a *Cause", context.Cause(ctx))
	}
	return c
}

// TestCallTimerIdle: with no progress, the idle timer ends the call and
// says after how long.
func TestCallTimerIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		ct := newCallTimer(time.Hour, cancel)
		defer ct.stop()
		ct.startIdle(5 * time.Millisecond)
		if c := causeOf(t, ctx); c.Kind != IdleTimeout || c.After != 5*time.Millisecond {
			t.Fatalf("cause %+v, want the idle timeout of 5ms", c)
		}
	})
}

// TestCallTimerHardDespiteProgress: progress keeps the idle timer from
// firing, never the hard maximum.
func TestCallTimerHardDespiteProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		ct := newCallTimer(20*time.Millisecond, cancel)
		defer ct.stop()
		ct.startIdle(time.Hour)
		for ctx.Err() == nil {
			ct.touch()
			time.Sleep(time.Millisecond)
		}
		if c := causeOf(t, ctx); c.Kind != HardTimeout || c.After != 20*time.Millisecond {
			t.Fatalf("cause %+v, want the hard maximum of 20ms", c)
		}
	})
}

// TestCallTimerIdleStopped: a stopped idle timer (a question waits for
// the host) does not fire, and progress does not restart it; the hard
// maximum still holds.
func TestCallTimerIdleStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		ct := newCallTimer(30*time.Millisecond, cancel)
		defer ct.stop()
		ct.startIdle(time.Hour)
		ct.stopIdle()
		ct.touch()
		if c := causeOf(t, ctx); c.Kind != HardTimeout {
			t.Fatalf("cause %+v, want the hard maximum", c)
		}
	})
}

// TestCallTimerNotedHard: a hard maximum only noted is set by armHard
// (before a wait), or else by startIdle, with or without an idle timeout.
func TestCallTimerNotedHard(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  func(ct *callTimer)
	}{
		{"armHard", func(ct *callTimer) { ct.armHard() }},
		{"startIdle without idle", func(ct *callTimer) { ct.startIdle(0) }},
		{"startIdle with a later idle", func(ct *callTimer) { ct.startIdle(time.Hour) }},
		{"armHard then startIdle", func(ct *callTimer) { ct.armHard(); ct.startIdle(time.Hour) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancelCause(context.Background())
				defer cancel(nil)
				var ct callTimer
				ct.note(5*time.Millisecond, cancel)
				defer ct.stop()
				tt.set(&ct)
				if c := causeOf(t, ctx); c.Kind != HardTimeout || c.After != 5*time.Millisecond {
					t.Fatalf("cause %+v, want the hard maximum of 5ms", c)
				}
			})
		})
	}
}

// deadlineCount counts DeadlineReached calls and when the first came.
type deadlineCount struct {
	n     atomic.Int32
	first atomic.Int64 // unix nanos
}

func (p *deadlineCount) DeadlineReached() {
	if p.n.Add(1) == 1 {
		p.first.Store(time.Now().UnixNano())
	}
}

// TestCallTimerDeadline: the caller's deadline rides on the call's timer:
// its hook is called once, at that moment, while the call goes on; the
// idle timer and the hard maximum still end the call later, on time.
func TestCallTimerDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		p := &deadlineCount{}
		start := time.Now()
		ct := &callTimer{deadline: start.Add(30 * time.Millisecond), hook: p}
		ct.init(100*time.Millisecond, cancel)
		defer ct.stop()
		ct.startIdle(time.Hour)
		time.Sleep(50 * time.Millisecond)
		synctest.Wait()
		if n := p.n.Load(); n != 1 {
			t.Fatalf("DeadlineReached called %d times by 50ms, want once", n)
		}
		if at := time.Unix(0, p.first.Load()).Sub(start); at != 30*time.Millisecond {
			t.Fatalf("DeadlineReached called at %v, want at 30ms", at)
		}
		if ctx.Err() != nil {
			t.Fatalf("the call ended at its deadline: %v", context.Cause(ctx))
		}
		if c := causeOf(t, ctx); c.Kind != HardTimeout || time.Since(start) != 100*time.Millisecond {
			t.Fatalf("cause %+v at %v, want the hard maximum at 100ms", c, time.Since(start))
		}
		if n := p.n.Load(); n != 1 {
			t.Fatalf("DeadlineReached called %d times in all, want once", n)
		}
	})
}

// TestCallTimerDeadlineAfterEnd: a call that ends before its caller's
// deadline never reaches it; nor does one whose hard maximum comes first.
func TestCallTimerDeadlineAfterEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		p := &deadlineCount{}
		ct := &callTimer{deadline: time.Now().Add(30 * time.Millisecond), hook: p}
		ct.init(time.Hour, cancel)
		ct.startIdle(time.Hour)
		time.Sleep(10 * time.Millisecond)
		ct.stop()
		time.Sleep(time.Second)
		synctest.Wait()

		ctx, cancel2 := context.WithCancelCause(context.Background())
		defer cancel2(nil)
		ct2 := &callTimer{deadline: time.Now().Add(30 * time.Millisecond), hook: p}
		ct2.init(20*time.Millisecond, cancel2)
		defer ct2.stop()
		if c := causeOf(t, ctx); c.Kind != HardTimeout {
			t.Fatalf("cause %+v, want the hard maximum", c)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n := p.n.Load(); n != 0 {
			t.Fatalf("DeadlineReached called %d times, want never", n)
		}
	})
}
