package ui

import (
	"sync"
	"sync/atomic"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/relay"
)

// recentMax is how many recent cancels and errors the live view keeps.
const recentMax = 50

// Event is one recent cancel or error the live view lists.
type Event struct {
	At     time.Time `json:"at"`
	Kind   string    `json:"kind"` // the outcome (cancelled, timeout, error, tool_error, busy, failed), or start_failed, crash
	Cause  string    `json:"cause"`
	Reason string    `json:"reason,omitempty"` // the cause's kind, for cancels and timeouts
	CallID uint64    `json:"callId,omitempty"`
	Server string    `json:"server"`
	Tool   string    `json:"tool,omitempty"`
}

// Snapshot is one update of the live view's stream.
type Snapshot struct {
	Status apitype.Status `json:"status"`
	Recent []Event        `json:"recent"`
	At     time.Time      `json:"at"`
}

// Live is the live view's state: the recent cancels and errors, and the
// streams to wake when anything changes.
type Live struct {
	status func() apitype.Status

	mu     sync.Mutex
	recent []Event // oldest first
	subs   map[chan struct{}]struct{}
	nsubs  atomic.Int32 // len(subs): changed costs one load with no page open
	closed chan struct{}
	once   sync.Once
}

// Close ends every stream of the view (the daemon is stopping); it is
// idempotent.
func (l *Live) Close() { l.once.Do(func() { close(l.closed) }) }

// NewLive returns the live view's state of a daemon whose status status
// reads.
func NewLive(status func() apitype.Status) *Live {
	return &Live{status: status, subs: map[chan struct{}]struct{}{}, closed: make(chan struct{})}
}

// Snapshot returns the view's current state.
func (l *Live) Snapshot() Snapshot {
	st := l.status()
	l.mu.Lock()
	recent := append([]Event{}, l.recent...)
	l.mu.Unlock()
	return Snapshot{Status: st, Recent: recent, At: time.Now()}
}

// subscribe returns a channel that receives a value (at most one waits)
// when something changed, and its cancel.
func (l *Live) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	l.mu.Lock()
	l.subs[ch] = struct{}{}
	l.nsubs.Store(int32(len(l.subs)))
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		delete(l.subs, ch)
		l.nsubs.Store(int32(len(l.subs)))
		l.mu.Unlock()
	}
}

// changed wakes every stream, without blocking. A nil Live ignores it.
func (l *Live) changed() {
	if l == nil || l.nsubs.Load() == 0 {
		return
	}
	l.mu.Lock()
	l.wakeLocked()
	l.mu.Unlock()
}

func (l *Live) wakeLocked() {
	for ch := range l.subs {
		select {
		case ch <- struct{}{}:
		default: // already woken: it will read the latest state
		}
	}
}

// note records a recent event and wakes every stream.
func (l *Live) note(ev Event) {
	if l == nil {
		return
	}
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	l.mu.Lock()
	if len(l.recent) == recentMax {
		copy(l.recent, l.recent[1:])
		l.recent = l.recent[:recentMax-1]
	}
	l.recent = append(l.recent, ev)
	l.wakeLocked()
	l.mu.Unlock()
}

// callEnded notes a call that did not end with its result.
func (l *Live) callEnded(c relay.CallInfo, outcome relay.Outcome, err error) {
	if outcome == relay.OutcomeOK {
		l.changed()
		return
	}
	ev := Event{Kind: string(outcome), CallID: c.ID, Server: c.Server, Tool: c.Tool}
	switch {
	case err != nil:
		ev.Cause = err.Error()
		if cause, ok := relay.CauseOf(err); ok {
			ev.Reason = causeName(cause)
		}
	case outcome == relay.OutcomeToolError:
		ev.Cause = "the tool reported an error (isError)" // never the result's content
	}
	l.note(ev)
}
