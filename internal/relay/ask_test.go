package relay

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/upstream"
)

// TestAsksStaleSignal: two questions arrive while a call is held; the hold
// takes both, and the second's ready signal is left over. The resumed
// call's wait takes that signal: it must go on waiting (woken false)
// rather than hold again with no question, which sent a host an
// input_required without inputRequests.
func TestAsksStaleSignal(t *testing.T) {
	var a asks
	a.init(nil, "s", "h", slog.New(slog.DiscardHandler), nil)
	a.Handle(&upstream.Inbound{})
	<-a.ready // await wakes,
	if !a.woken(true, nil) {
		t.Fatal("a queued question did not hold a holdable call")
	}
	a.Handle(&upstream.Inbound{}) // a second question comes,
	a.mu.Lock()
	taken := a.queued // and the hold takes both
	a.queued = nil
	a.mu.Unlock()
	if len(taken) != 2 {
		t.Fatalf("the hold took %d questions, want 2", len(taken))
	}
	select {
	case <-a.ready: // the resumed call's wait
	default:
		t.Fatal("no signal left over: the race this test is about did not happen")
	}
	if a.woken(true, nil) {
		t.Fatal("a stale signal held the call with nothing to ask")
	}
	a.Handle(&upstream.Inbound{})
	<-a.ready
	if !a.woken(true, nil) {
		t.Fatal("a new question did not hold the call")
	}
}

// refusingAsker declares nothing and says why.
type refusingAsker struct{ why string }

func (refusingAsker) Can(string, json.RawMessage) bool { return false }
func (refusingAsker) Ask(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("never asked")
}
func (refusingAsker) Notify(string, json.RawMessage) {}
func (r refusingAsker) Refusal(method string, _ json.RawMessage) *jsonrpc.Error {
	if r.why == "" {
		return nil
	}
	return jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s: %s", method, r.why)
}

// TestAsksRefusal: an asker that says why it cannot take a question has
// that said to a legacy upstream (Refusal, as upstream.Refuser); one that
// does not says nothing.
func TestAsksRefusal(t *testing.T) {
	for _, why := range []string{"job job_x's host left", ""} {
		var a asks
		a.init(refusingAsker{why}, "s", "h", slog.New(slog.DiscardHandler), nil)
		var u upstream.Refuser = &a
		e := u.Refusal("elicitation/create", nil)
		if (e == nil) != (why == "") || e != nil && !strings.Contains(e.Message, why) {
			t.Errorf("Refusal(%q) = %v", why, e)
		}
	}
}
