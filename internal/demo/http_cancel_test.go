package demo

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestHTTPLegacyDisconnectIsNotCancel(t *testing.T) {
	p := startHTTP(t, nil)
	sid := p.initialize("2025-11-25")
	h := headers{"Mcp-Session-Id": sid}
	ctx, cancel := context.WithCancel(context.Background())
	s := p.openSSE(ctx, h, callReq("2", "export", `{"seconds":0.4,"steps":4}`, `{"progressToken":"d"}`))
	if m, _ := s.next(); m == nil || m.IsResponse() {
		t.Fatalf("first event %v", m)
	}
	last := s.rd.LastEventID()
	cancel()
	if e := p.event(finished("2")); e.Outcome != OutcomeResult {
		t.Errorf("a disconnected legacy request: %+v", e)
	}
	notes, resp := p.resume(sid, last).rest()
	if got := progressValues(t, notes); !slices.Equal(got, seq(2, 4)) || resp == nil {
		t.Errorf("replayed progress %v, response %v", got, resp)
	}
	if len(recordedCancellations(p)) != 0 {
		t.Error("a disconnect was recorded as a cancellation")
	}
}

// recordedCancellations returns the cancellations recorded so far.
func recordedCancellations(p *hpeer) []Event {
	for {
		select {
		case e := <-p.events:
			p.seen = append(p.seen, e)
			continue
		default:
		}
		break
	}
	var out []Event
	for _, e := range p.seen {
		if e.Event == EventCancelled {
			out = append(out, e)
		}
	}
	return out
}

func TestHTTPCancelByNotification(t *testing.T) {
	p := startHTTP(t, nil)
	sid := p.initialize("2025-11-25")
	h := headers{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	s := p.openSSE(context.Background(), h, callReq(`"c1"`, "export", `{"seconds":30,"steps":100}`, `{"progressToken":"c"}`))
	if m, _ := s.next(); m == nil || m.IsResponse() {
		t.Fatalf("first event %v", m)
	}
	p.accepted(h, cancelNote(`"c1"`, "user gave up"))
	e := p.event(kind(EventCancelled))
	if string(e.RequestID) != `"c1"` || e.Reason != "user gave up" || !*e.Known || e.Tool != "export" || e.Session != sid {
		t.Errorf("cancellation %+v", e)
	}
	if e := p.event(finished(`"c1"`)); e.Outcome != OutcomeCancelled {
		t.Errorf("finished %+v", e)
	}
	if _, resp := s.rest(); resp != nil {
		t.Errorf("response after cancel: %s", resp.Encode())
	}
	// The cancellations tool sees it too.
	out := decodeTool(t, p.jsonAnswer(h, callReq("3", "cancellations", `{}`, ""), 200))
	if !strings.Contains(out.text(), `"reason":"user gave up"`) {
		t.Errorf("cancellations %s", out.text())
	}
}

func TestHTTPCancelByStreamClose(t *testing.T) {
	p := startHTTP(t, nil)
	t.Run("sse", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := p.openSSE(ctx, modernHeaders("tools/call", "export"), modernCall("1", "export", `{"seconds":30,"steps":100}`, `,"progressToken":"s"`))
		if m, _ := s.next(); m == nil || m.IsResponse() {
			t.Fatalf("first event %v", m)
		}
		cancel()
		e := p.event(kind(EventCancelled))
		if string(e.RequestID) != "1" || e.Reason != ReasonStreamClosed || !*e.Known || e.Tool != "export" {
			t.Errorf("cancellation %+v", e)
		}
		if e := p.event(finished("1")); e.Outcome != OutcomeCancelled {
			t.Errorf("finished %+v", e)
		}
	})
	t.Run("json", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			resp, err := p.request(ctx, http.MethodPost, modernHeaders("tools/call", "wait"), modernCall("1", "wait", `{"seconds":30}`, ""))
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		p.event(func(e Event) bool { return e.Event == EventRequest && e.Tool == "wait" })
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("request: %v", err)
		}
		if e := p.event(kind(EventCancelled)); e.Reason != ReasonStreamClosed || !*e.Known || e.Tool != "wait" {
			t.Errorf("cancellation %+v", e)
		}
		if e := p.event(finished("1")); e.Outcome != OutcomeCancelled {
			t.Errorf("finished %+v", e)
		}
	})
}

func TestHTTPCancelledNotificationOverHTTP(t *testing.T) {
	p := startHTTP(t, nil)
	p.accepted(headers{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "notifications/cancelled"}, cancelNote("1", "should not be sent"))
	e := p.event(kind(EventCancelledHTTP))
	if string(e.RequestID) != "1" || e.Reason != "should not be sent" || e.Headers["Mcp-Method"] != "notifications/cancelled" {
		t.Errorf("event %+v", e)
	}
	// Without a 2026 header it is not accepted, but recorded all the same.
	if code, _ := p.status(http.MethodPost, nil, cancelNote("2", "bare")); code != 400 {
		t.Errorf("a bare cancel: %d, want 400", code)
	}
	if e := p.event(kind(EventCancelledHTTP)); string(e.RequestID) != "2" {
		t.Errorf("event %+v", e)
	}
	if len(recordedCancellations(p)) != 0 {
		t.Error("recorded as a cancellation")
	}
}
