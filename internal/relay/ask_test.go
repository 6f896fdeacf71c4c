package relay

import (
	"log/slog"
	"testing"

	"mcpx/internal/upstream"
)

// TestAsksStaleSignal: two questions arrive while a call is held; the hold
// takes both, and the second's ready signal is left over. The waiting
// call must see that nothing is queued (await then goes on waiting)
// rather than hold again with no question, which sent a host an
// input_required without inputRequests.
func TestAsksStaleSignal(t *testing.T) {
	var a asks
	a.init(nil, "s", "h", slog.New(slog.DiscardHandler), nil)
	a.Handle(&upstream.Inbound{})
	<-a.ready // await wakes, and holds
	a.Handle(&upstream.Inbound{})
	a.mu.Lock()
	taken := a.queued // hold takes the queue: both questions
	a.queued = nil
	a.mu.Unlock()
	if len(taken) != 2 {
		t.Fatalf("the hold took %d questions, want 2", len(taken))
	}
	select {
	case <-a.ready:
	default:
		t.Fatal("no signal left over: the race this test is about did not happen")
	}
	if a.anyQueued() {
		t.Fatal("anyQueued after the hold took every question")
	}
	a.Handle(&upstream.Inbound{})
	if !a.anyQueued() {
		t.Fatal("a new question is not seen as queued")
	}
}
