package ui

import (
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/relay"
)

// BenchmarkObserveCall is what the daemon's observer (metrics and the
// live view, no page open) costs per tool call with 5 progress
// notifications.
func BenchmarkObserveCall(b *testing.B) {
	status := func() apitype.Status { return apitype.Status{} }
	o := NewObserver(NewMetrics(status), NewLive(status))
	c := relay.CallInfo{ID: 1, Server: "demo", Tool: "export", Host: "host-1"}
	b.ReportAllocs()
	for b.Loop() {
		o.CallStarted(c)
		for range 5 {
			o.ProgressAdvanced(c)
		}
		o.CallEnded(c, relay.OutcomeOK, time.Millisecond, nil)
	}
}

// BenchmarkObserveCallPageOpen is BenchmarkObserveCall with a live view
// stream subscribed (its wake-ups are dropped once one is pending).
func BenchmarkObserveCallPageOpen(b *testing.B) {
	status := func() apitype.Status { return apitype.Status{} }
	live := NewLive(status)
	_, stop := live.subscribe()
	defer stop()
	o := NewObserver(NewMetrics(status), live)
	c := relay.CallInfo{ID: 1, Server: "demo", Tool: "export", Host: "host-1"}
	b.ReportAllocs()
	for b.Loop() {
		o.CallStarted(c)
		for range 5 {
			o.ProgressAdvanced(c)
		}
		o.CallEnded(c, relay.OutcomeOK, time.Millisecond, nil)
	}
}
