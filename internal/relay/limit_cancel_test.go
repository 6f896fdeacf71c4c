package relay

import (
	"context"
	"errors"
	"testing"

	"mcpx/internal/config"
)

// TestLimiterCancelledFreesPlace: a queued call whose caller gave up no
// longer holds its place, even before its goroutine wakes to leave: a
// call that needs the place gets it, and no slot goes to it. (The waiter
// is planted as a goroutine that has not run yet would leave it.)
func TestLimiterCancelledFreesPlace(t *testing.T) {
	l := newLimitsVar(config.CallLimits{MaxConcurrentCalls: 1, QueueLength: 1}).limiter()
	release := mustAcquire(t, l, "a")
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	l.mu.Lock()
	g := l.gates["a"]
	dead := &waiter{ctx: gone, ready: make(chan struct{})}
	dead.elem = g.queue.PushBack(dead)
	l.mu.Unlock()
	if n := l.queued()["a"]; n != 0 {
		t.Errorf("queued = %d, want the given-up call not counted", n)
	}

	next := goAcquire(context.Background(), l, "a") // its place is free
	waitQueued(t, l, "a", 1)
	if next.finished() {
		t.Fatalf("the call after a given-up one: %v, want it queued", next.err)
	}
	release()
	wait(t, next, "the queued call")
	if next.err != nil {
		t.Fatal(next.err)
	}
	if dead.admitted {
		t.Error("a slot went to a call whose caller gave up")
	}
	next.release()

	// And at the head of the queue its turn is skipped.
	release = mustAcquire(t, l, "a")
	l.mu.Lock()
	dead = &waiter{ctx: gone, ready: make(chan struct{})}
	dead.elem = l.gates["a"].queue.PushBack(dead)
	l.mu.Unlock()
	release()
	if dead.admitted {
		t.Error("a slot went to a call whose caller gave up")
	}
	checkEmpty(t, l)
}

// TestLimiterBeforeWait: take calls beforeWait when the call is queued,
// before it waits, and not when it gets a slot or is refused at once.
func TestLimiterBeforeWait(t *testing.T) {
	lv := newLimitsVar(config.CallLimits{MaxConcurrentCalls: 1, QueueLength: 1})
	l := lv.limiter()
	calls := 0
	count := func() { calls++ }
	g, err := l.take(context.Background(), "s", count)
	if err != nil || calls != 0 {
		t.Fatalf("first take: %v, beforeWait called %d times, want none", err, calls)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	waited := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := l.take(ctx, "s", func() { close(waited) })
		done <- err
	}()
	<-waited // queued: called before the wait
	if _, err := l.take(context.Background(), "s", count); err == nil || calls != 0 {
		t.Fatalf("take with a full queue: %v, beforeWait called %d times, want a refusal and none", err, calls)
	}
	cancel(errors.New("gave up"))
	if err := <-done; err == nil {
		t.Fatal("the queued take succeeded after its ctx ended")
	}
	l.release("s", g)
}
