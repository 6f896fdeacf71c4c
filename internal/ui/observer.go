package ui

import (
	"time"

	"mcpx/internal/relay"
)

// Observer feeds the metrics and the live view: the daemon gives it to
// the relay (relay.Observer) and to the pool (upstream.Observer). Its
// methods never block.
type Observer struct {
	m    *Metrics
	live *Live
}

// NewObserver returns the observer feeding m and live (either may be nil).
func NewObserver(m *Metrics, live *Live) *Observer { return &Observer{m: m, live: live} }

// CallStarted implements relay.Observer.
func (o *Observer) CallStarted(c relay.CallInfo) {
	if o.m != nil {
		o.m.callStarted(c)
	}
	o.live.changed()
}

// CallEnded implements relay.Observer.
func (o *Observer) CallEnded(c relay.CallInfo, outcome relay.Outcome, took time.Duration, err error) {
	if o.m != nil {
		o.m.callEnded(c, outcome, took, err)
	}
	if o.live != nil {
		o.live.callEnded(c, outcome, err)
	}
}

// ProgressAdvanced implements relay.Observer.
func (o *Observer) ProgressAdvanced(c relay.CallInfo) {
	if o.m != nil {
		o.m.progressAdvanced(c)
	}
	o.live.changed()
}

// JobStarted implements jobs.Observer.
func (o *Observer) JobStarted(server, tool string) {
	if o.m != nil {
		o.m.jobStarted()
	}
	o.live.changed()
}

// JobProgressed implements jobs.Observer.
func (o *Observer) JobProgressed() { o.live.changed() }

// JobEnded implements jobs.Observer.
func (o *Observer) JobEnded(server, tool, status string) {
	if o.m != nil {
		o.m.jobEnded(status)
	}
	o.live.changed()
}

// QueueWaited implements relay.Observer.
func (o *Observer) QueueWaited(server string, waited time.Duration, admitted bool) {
	if o.m != nil {
		o.m.queueWaited(server, waited, admitted)
	}
}

// UpstreamStarted implements upstream.Observer.
func (o *Observer) UpstreamStarted(server string, restart bool) {
	if o.m != nil {
		o.m.upstreamStarted(server, restart)
	}
	o.live.changed()
}

// UpstreamStartFailed implements upstream.Observer.
func (o *Observer) UpstreamStartFailed(server string, err error) {
	if o.m != nil {
		o.m.upstreamStartFailed(server)
	}
	o.live.note(Event{Kind: "start_failed", Server: server, Cause: err.Error()})
}

// UpstreamCrashed implements upstream.Observer.
func (o *Observer) UpstreamCrashed(server string, err error) {
	if o.m != nil {
		o.m.upstreamCrashed(server)
	}
	cause := "ended"
	if err != nil {
		cause = err.Error()
	}
	o.live.note(Event{Kind: "crash", Server: server, Cause: cause})
}
