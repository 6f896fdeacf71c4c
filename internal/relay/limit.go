package relay

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"

	"mcpx/internal/config"
)

// limiter bounds the calls in flight to each upstream server. At most
// MaxConcurrentCalls hold a slot at once; a call beyond them waits, first
// come first served, in a queue of at most QueueLength calls for at most
// QueueTimeout. A call that finds the queue full, or waits out its
// timeout, fails at once with a *BusyError: a wait is never unbounded. A
// caller that gives up while it waits (its context ends) leaves the queue
// at once.
//
// The limits are read from the current config at every decision, so a
// reload applies to the calls that arrive, and the slots that come free,
// from then on; a raised limit admits waiting calls at once (kick). A
// server's state exists only while it has calls: none is left behind.
type limiter struct {
	limits func(server string) config.CallLimits
	// onWait, if set, is told of each wait in a queue as it ends (the
	// relay's Observer.QueueWaited); set before any call.
	onWait func(server string, waited time.Duration, admitted bool)

	mu    sync.Mutex
	gates map[string]*gate
}

// gate is one server's slots and queue.
type gate struct {
	active int       // calls holding a slot
	queue  list.List // of *waiter, oldest first
}

// waiter is one queued call. A waiter whose caller gave up (ctx ended) no
// longer counts: it is dropped from the queue when its place is needed
// or its turn comes, even before its own goroutine has woken to leave, so
// that a host that cancels a queued call and sends another at once finds
// its place free.
type waiter struct {
	ctx      context.Context
	ready    chan struct{} // closed once admitted, with a slot held for it
	elem     *list.Element // its place in the queue; nil once out of it
	admitted bool
}

// drop takes w out of g's queue.
func (g *gate) drop(w *waiter) {
	g.queue.Remove(w.elem)
	w.elem = nil
}

// prune drops the waiters whose callers gave up.
func (g *gate) prune() {
	for e := g.queue.Front(); e != nil; {
		next := e.Next()
		if w := e.Value.(*waiter); w.ctx.Err() != nil {
			g.drop(w)
		}
		e = next
	}
}

func newLimiter(limits func(server string) config.CallLimits) *limiter {
	return &limiter{limits: limits, gates: map[string]*gate{}}
}

// acquire takes a slot of server's, waiting in its queue if need be, and
// returns the function that gives it back (idempotent). It fails with a
// *BusyError when the queue is full or the wait outlasts the queue
// timeout, and with ctx's cause when ctx ends first.
func (l *limiter) acquire(ctx context.Context, server string) (release func(), err error) {
	g, err := l.take(ctx, server, nil)
	if err != nil {
		return nil, err
	}
	return l.releaser(server, g), nil
}

// slot is one call slot of a server's, held: acquire's release as a
// value a call's state holds, without a closure of its own.
type slot struct {
	l      *limiter
	server string
	g      *gate
	once   sync.Once
}

// release gives the slot back; it is idempotent.
func (s *slot) release() { s.once.Do(func() { s.l.release(s.server, s.g) }) }

// take is acquire, returning the gate whose slot it took. beforeWait,
// if set, is called before the call waits in the queue (not when it gets
// a slot, or is refused, at once).
func (l *limiter) take(ctx context.Context, server string, beforeWait func()) (g *gate, err error) {
	lim := l.limits(server)
	l.mu.Lock()
	g = l.gates[server]
	if g == nil {
		g = &gate{}
		l.gates[server] = g
	}
	l.admit(server, g) // in case a reload raised the limit a moment ago
	// A call never overtakes one already waiting.
	if lim.MaxConcurrentCalls <= 0 || g.active < lim.MaxConcurrentCalls && g.queue.Len() == 0 {
		g.active++
		l.mu.Unlock()
		return g, nil
	}
	if g.queue.Len() >= lim.QueueLength {
		g.prune()
	}
	if g.queue.Len() >= lim.QueueLength {
		l.gc(server, g)
		l.mu.Unlock()
		return nil, &BusyError{Server: server, Limits: lim, Full: true}
	}
	w := &waiter{ctx: ctx, ready: make(chan struct{})}
	w.elem = g.queue.PushBack(w)
	l.mu.Unlock()
	if beforeWait != nil {
		beforeWait()
	}

	start := time.Now()
	var expired <-chan time.Time
	if lim.QueueTimeout > 0 {
		t := time.NewTimer(lim.QueueTimeout)
		defer t.Stop()
		expired = t.C
	}
	timedOut := false
	if l.onWait != nil {
		defer func() { l.onWait(server, time.Since(start), err == nil) }()
	}
	select {
	case <-w.ready:
		return g, nil
	case <-ctx.Done():
		err = context.Cause(ctx)
	case <-expired:
		timedOut = true
		err = &BusyError{Server: server, Limits: lim, Waited: time.Since(start)}
	}
	l.mu.Lock()
	if w.admitted {
		// Admitted as it gave up. A call whose queue time ran out takes
		// the slot after all; one whose caller left passes it on.
		l.mu.Unlock()
		if timedOut {
			return g, nil
		}
		l.release(server, g)
		return nil, err
	}
	if w.elem != nil { // else already dropped
		g.drop(w)
	}
	l.gc(server, g)
	l.mu.Unlock()
	return nil, err
}

// releaser returns an idempotent release of one of g's slots.
func (l *limiter) releaser(server string, g *gate) func() {
	var once sync.Once
	return func() { once.Do(func() { l.release(server, g) }) }
}

// release gives back a slot and admits the calls that may now run.
func (l *limiter) release(server string, g *gate) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g.active--
	l.admit(server, g)
	l.gc(server, g)
}

// admit hands free slots to waiting calls, oldest first. l.mu is held.
func (l *limiter) admit(server string, g *gate) {
	if g.queue.Len() == 0 {
		return
	}
	limit := l.limits(server).MaxConcurrentCalls
	for g.queue.Len() > 0 && (limit <= 0 || g.active < limit) {
		w := g.queue.Front().Value.(*waiter)
		g.drop(w)
		if w.ctx.Err() != nil {
			continue // its caller gave up: no slot for it
		}
		w.admitted = true
		g.active++
		close(w.ready)
	}
}

// gc forgets a server with no call. l.mu is held.
func (l *limiter) gc(server string, g *gate) {
	if g.active == 0 && g.queue.Len() == 0 && l.gates[server] == g {
		delete(l.gates, server)
	}
}

// kick admits what the current limits allow: after a reload raised a
// limit or removed it (a removed server has none), waiting calls need not
// wait for a slot to come free.
func (l *limiter) kick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for server, g := range l.gates {
		l.admit(server, g)
	}
}

// queued returns how many calls wait, by server; servers with none are
// left out.
func (l *limiter) queued() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for server, g := range l.gates {
		n := 0
		for e := g.queue.Front(); e != nil; e = e.Next() {
			if e.Value.(*waiter).ctx.Err() == nil {
				n++
			}
		}
		if n > 0 {
			out[server] = n
		}
	}
	return out
}

// size returns how many servers the limiter tracks, and the calls holding
// a slot and waiting across them (for tests: 0, 0, 0 once every call has
// ended).
func (l *limiter) size() (servers, active, queued int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, g := range l.gates {
		active += g.active
		queued += g.queue.Len()
	}
	return len(l.gates), active, queued
}

// BusyError ends a call that found no free slot of its upstream's: the
// queue was full (Full), or the call waited in it for Waited, the whole
// queue timeout, without a slot coming free.
type BusyError struct {
	Server string
	Limits config.CallLimits // the limits it met
	Full   bool
	Waited time.Duration
}

func (e *BusyError) Error() string {
	slots := fmt.Sprintf("all %d of its call slots (maxConcurrentCalls) are taken", e.Limits.MaxConcurrentCalls)
	switch {
	case e.Full && e.Limits.QueueLength == 0:
		return fmt.Sprintf("upstream %q is busy: %s and it has no queue (queueLength 0); try again later", e.Server, slots)
	case e.Full:
		return fmt.Sprintf("upstream %q is busy: %s and its queue of %d (queueLength) is full; try again later", e.Server, slots, e.Limits.QueueLength)
	}
	return fmt.Sprintf("upstream %q is busy: %s and none came free while the call waited %s in its queue (queueTimeout); try again later",
		e.Server, slots, FormatDuration(e.Waited))
}

// HostLimitError refuses a request of a host connection that already has
// Limit requests in flight, the most it may have.
type HostLimitError struct {
	Limit int
}

func (e *HostLimitError) Error() string {
	return fmt.Sprintf("too many requests in flight: this connection already has %d, the most it may have (mcpx.maxCallsPerHost); wait for one to end", e.Limit)
}
