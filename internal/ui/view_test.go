package ui

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/relay"
	"mcpx/internal/sse"
)

// The event stream sends a snapshot at once and another after a change,
// and ends when the view is closed.
func TestEventsStream(t *testing.T) {
	var calls atomic.Int64
	status := func() apitype.Status {
		return apitype.Status{Calls: make([]apitype.InFlightCall, calls.Load())}
	}
	live := NewLive(status)
	v := NewView(ViewOptions{Live: live})
	srv := httptest.NewServer(v)
	defer srv.Close()

	// Log in with a one-time link, then open the stream with its cookie.
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(srv.URL + v.LinkPath())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookie := resp.Header.Get("Set-Cookie")
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Strict") {
		t.Fatalf("login: %d, cookie %q", resp.StatusCode, cookie)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/ui/events", nil)
	req.Header.Set("Cookie", strings.Split(cookie, ";")[0])
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, ct)
	}
	r := sse.NewReader(resp.Body, 0)
	next := func() Snapshot {
		t.Helper()
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		var s Snapshot
		if err := json.Unmarshal(ev.Data, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := next(); len(s.Status.Calls) != 0 {
		t.Fatalf("first snapshot has %d calls", len(s.Status.Calls))
	}
	calls.Store(1)
	o := NewObserver(nil, live)
	o.CallStarted(relay.CallInfo{ID: 1, Server: "s", Tool: "t"})
	if s := next(); len(s.Status.Calls) != 1 {
		t.Fatalf("after a change the snapshot has %d calls", len(s.Status.Calls))
	}
	o.CallEnded(relay.CallInfo{ID: 1, Server: "s", Tool: "t"}, relay.OutcomeCancelled, time.Second, &relay.Cause{Kind: relay.UserInterrupt})
	for {
		s := next()
		if len(s.Recent) == 1 {
			if ev := s.Recent[0]; ev.Kind != "cancelled" || ev.Reason != "user_interrupt" || ev.Cause != "interrupted by user" {
				t.Errorf("recent event %+v", ev)
			}
			break
		}
	}
	live.Close()
	for {
		_, err := r.Next()
		if err == nil {
			continue // a snapshot sent before the close
		}
		if !errors.Is(err, io.EOF) {
			t.Errorf("after Close the stream ended with %v, want its end (EOF)", err)
		}
		break
	}
}
