package relay

import (
	"context"
	"sync"
	"time"
)

// callTimer is a call's hard maximum and idle timer in one runtime timer,
// and the moment its caller must hear of (Call.Deadline).
// It is set for the earlier of the two deadlines; when it fires it cancels
// the call with the cause of the deadline that passed, or, when progress
// moved the idle deadline on meanwhile, sets itself for the next one.
// Progress only notes the new idle deadline: a relayed call costs one
// timer, and a progress notification no timer operation.
type callTimer struct {
	cancel    context.CancelCauseFunc
	max, idle time.Duration

	mu      sync.Mutex
	t       *time.Timer // nil until a deadline is first set
	hardAt  time.Time   // zero: no maximum
	idleAt  time.Time   // zero: the idle timer does not run
	at      time.Time   // when t fires; zero: not set
	stopped bool
	// deadline is when hook is told (Call.Deadline); zero: never, or
	// done. Set before the timer is shared.
	deadline time.Time
	hook     DeadlineHook
}

// newCallTimer starts a call's timer with its hard maximum (0: none); the
// idle timer starts with startIdle.
func newCallTimer(max time.Duration, cancel context.CancelCauseFunc) *callTimer {
	ct := &callTimer{}
	ct.init(max, cancel)
	return ct
}

// init is newCallTimer for a zero callTimer held elsewhere (callState's),
// so that a call's state takes one allocation.
func (ct *callTimer) init(max time.Duration, cancel context.CancelCauseFunc) {
	ct.note(max, cancel)
	ct.armHard()
}

// note is init but for setting the runtime timer: the hard maximum counts
// from now, and the timer is set for it by armHard, or with the idle
// timer by startIdle, whichever comes first. A call that waits for
// nothing in between so takes one timer operation, not two. ct is not
// yet shared.
func (ct *callTimer) note(max time.Duration, cancel context.CancelCauseFunc) {
	ct.cancel, ct.max = cancel, max
	if max > 0 {
		ct.hardAt = time.Now().Add(max)
	}
}

// armHard sets the runtime timer for the hard maximum, if it is not set
// already: before a wait the maximum must bound.
func (ct *callTimer) armHard() {
	ct.mu.Lock()
	ct.arm()
	ct.mu.Unlock()
}

// startIdle (re)starts the idle timer for a full idle (0: none). The
// runtime timer is set for the earlier deadline, the hard maximum's if
// that is earlier, or the only one.
func (ct *callTimer) startIdle(idle time.Duration) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	ct.idle = idle
	if idle <= 0 || ct.stopped {
		ct.idleAt = time.Time{}
	} else {
		ct.idleAt = time.Now().Add(idle)
	}
	ct.arm() // nothing once stopped
}

// touch restarts a running idle timer for a full interval.
func (ct *callTimer) touch() {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if ct.idleAt.IsZero() {
		return
	}
	ct.idleAt = time.Now().Add(ct.idle)
	ct.arm() // a later deadline: sets nothing while the timer is set
}

// stopIdle stops the idle timer (until startIdle).
func (ct *callTimer) stopIdle() {
	ct.mu.Lock()
	ct.idleAt = time.Time{}
	ct.mu.Unlock()
}

// stop stops both for good.
func (ct *callTimer) stop() {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	ct.stopped = true
	if ct.t != nil {
		ct.t.Stop()
	}
}

// arm sets the runtime timer for the earlier deadline unless it is set for
// that moment or before (then it fires, finds the deadline later, and sets
// itself again). ct.mu is held.
func (ct *callTimer) arm() {
	next := ct.hardAt
	if !ct.idleAt.IsZero() && (next.IsZero() || ct.idleAt.Before(next)) {
		next = ct.idleAt
	}
	if !ct.deadline.IsZero() && (next.IsZero() || ct.deadline.Before(next)) {
		next = ct.deadline
	}
	if next.IsZero() || ct.stopped || !ct.at.IsZero() && !next.Before(ct.at) {
		return
	}
	ct.at = next
	if ct.t == nil {
		ct.t = time.AfterFunc(time.Until(next), ct.fire)
	} else {
		ct.t.Reset(time.Until(next))
	}
}

// fire runs when the runtime timer fires.
func (ct *callTimer) fire() {
	ct.mu.Lock()
	if ct.stopped {
		ct.mu.Unlock()
		return
	}
	ct.at = time.Time{}
	now := time.Now()
	var cause *Cause
	var hook DeadlineHook
	switch {
	case !ct.hardAt.IsZero() && !now.Before(ct.hardAt):
		cause = &Cause{Kind: HardTimeout, After: ct.max}
	case !ct.idleAt.IsZero() && !now.Before(ct.idleAt):
		cause = &Cause{Kind: IdleTimeout, After: ct.idle}
	case !ct.deadline.IsZero() && !now.Before(ct.deadline):
		hook, ct.deadline = ct.hook, time.Time{}
		ct.arm() // for the deadlines still to come
	default:
		ct.arm()
	}
	ct.mu.Unlock()
	switch {
	case cause != nil:
		ct.cancel(cause)
	case hook != nil:
		hook.DeadlineReached()
	}
}
