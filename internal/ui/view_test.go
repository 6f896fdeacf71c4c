package ui

import (
	"context"
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
	"mcpx/internal/principal"
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

	// Trade a one-time link's token for a session key, then open the
	// stream with it.
	c := &http.Client{Timeout: 10 * time.Second}
	session := login(t, c, srv.URL, v.LinkPath(principal.LocalUser()))
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/ui/events", nil)
	req.Header.Set(SessionHeader, session)
	resp, err := c.Do(req)
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

// login trades the token of link (a LinkPath) for a session key as the
// page does.
func login(t *testing.T, c *http.Client, origin, link string) string {
	t.Helper()
	_, tok, ok := strings.Cut(link, "#t=")
	if !ok || !strings.HasPrefix(link, "/ui/#t=") {
		t.Fatalf("link %q has no token in its fragment", link)
	}
	req, _ := http.NewRequest(http.MethodPost, origin+"/ui/session", nil)
	req.Header.Set(LinkHeader, tok)
	req.Header.Set("Origin", origin)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Session string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || out.Session == "" {
		t.Fatalf("trading the link: %d %v %+v", resp.StatusCode, err, out)
	}
	if sc := resp.Header.Values("Set-Cookie"); len(sc) != 0 {
		t.Errorf("the view set a cookie: %q", sc)
	}
	return out.Session
}

// TestSessionByHeaderOnly: the view sets no cookie; its data and actions
// need the session key in SessionHeader, and a link is traded only once,
// only for a page of the view's own origin.
func TestSessionByHeaderOnly(t *testing.T) {
	live := NewLive(func() apitype.Status { return apitype.Status{} })
	defer live.Close()
	restarted := 0
	v := NewView(ViewOptions{Live: live, Restart: func(context.Context, string) error { restarted++; return nil }})
	srv := httptest.NewServer(v)
	defer srv.Close()
	c := &http.Client{Timeout: 10 * time.Second}
	do := func(method, path string, h map[string]string) int {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		for k, val := range h {
			req.Header.Set(k, val)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if sc := resp.Header.Values("Set-Cookie"); len(sc) != 0 {
			t.Errorf("%s %s set a cookie: %q", method, path, sc)
		}
		return resp.StatusCode
	}
	link := v.LinkPath(principal.LocalUser())
	_, tok, _ := strings.Cut(link, "#t=")
	if code := do("POST", "/ui/session", map[string]string{LinkHeader: tok}); code != http.StatusForbidden {
		t.Errorf("trading a link without the view's Origin: %d, want 403", code)
	}
	session := login(t, c, srv.URL, link)
	if code := do("POST", "/ui/session", map[string]string{LinkHeader: tok, "Origin": srv.URL}); code != http.StatusForbidden {
		t.Errorf("a link traded twice: %d, want 403", code)
	}
	if code := do("GET", "/ui/", nil); code != http.StatusOK {
		t.Errorf("the page: %d, want it served (it holds no data)", code)
	}
	for _, path := range []string{"/ui/state", "/ui/events"} {
		if code := do("GET", path, map[string]string{"Cookie": "mcpx_ui=" + session}); code != http.StatusForbidden {
			t.Errorf("%s with the key as a cookie: %d, want 403", path, code)
		}
		if code := do("GET", path, map[string]string{SessionHeader: session + "x"}); code != http.StatusForbidden {
			t.Errorf("%s with a wrong key: %d, want 403", path, code)
		}
	}
	if code := do("GET", "/ui/state", map[string]string{SessionHeader: session}); code != http.StatusOK {
		t.Errorf("state with the key: %d, want 200", code)
	}
	if code := do("POST", "/ui/servers/s/restart", map[string]string{"Origin": srv.URL}); code != http.StatusForbidden || restarted != 0 {
		t.Errorf("an action without the key: %d, want 403", code)
	}
	if code := do("POST", "/ui/servers/s/restart", map[string]string{"Origin": srv.URL, SessionHeader: session}); code != http.StatusNoContent || restarted != 1 {
		t.Errorf("an action with the key: %d, want 204", code)
	}
}
