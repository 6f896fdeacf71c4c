package hostserver

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"mcpx/internal/hosthttp"
	"mcpx/internal/outq"
)

// lockedBuffer is a log's output, safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) lines(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), substr)
}

// TestRepeatedRefusalsAggregated: a flood of refused requests writes one
// line a window, and one saying how many more came.
func TestRepeatedRefusalsAggregated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lockedBuffer
		s := New(nil, nil, &Options{Logger: slog.New(slog.NewTextHandler(&out, nil))})
		face := s.HTTP(nil)
		defer face.Close()
		h := face.Handler(hosthttp.Access{Addr: "127.0.0.1:7777", Tokens: testTokens{"right": ""}})
		send := func() {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7777/mcp", strings.NewReader("{}"))
			r.Header.Set("Authorization", "Bearer wrong")
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
		for range 3700 {
			send()
		}
		if n := out.lines("http request refused"); n != 1 {
			t.Fatalf("%d lines for 3700 refusals, want 1:\n%s", n, out.b.String())
		}
		time.Sleep(repeatWindow)
		synctest.Wait()
		if n := out.lines("more=3699"); n != 1 {
			t.Fatalf("no line counting the 3699 more:\n%s", out.b.String())
		}
		if n := out.lines("http request refused"); n != 2 {
			t.Fatalf("%d lines after the window, want 2:\n%s", n, out.b.String())
		}
	})
}

// countSink counts what it is given.
type countSink struct {
	mu sync.Mutex
	n  int
}

func (c *countSink) pushWhile(func() bool, []byte)                 { c.mu.Lock(); c.n++; c.mu.Unlock() }
func (c *countSink) pushProgressWhile(func() bool, string, []byte) {}
func (c *countSink) finish()                                       {}
func (c *countSink) queue() *outq.Queue                            { return nil }
func (c *countSink) carriesRequests() bool                         { return true }
func (c *countSink) hostContext() context.Context                  { return nil }
func (c *countSink) count() int                                    { c.mu.Lock(); defer c.mu.Unlock(); return c.n }

// TestListChangedCoalesced: 50,000 list changes from an upstream reach a
// watching host as one notification at once and one when they stop, and
// are logged as many times; a change after a quiet window goes at once.
func TestListChangedCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lockedBuffer
		s := New(nil, nil, &Options{Logger: slog.New(slog.NewTextHandler(&out, nil))})
		host := &countSink{}
		s.watchLegacy(&hostSession{}, host)
		for range 50000 {
			s.ToolsChanged()
		}
		if n := host.count(); n != 1 {
			t.Fatalf("the host got %d notifications during the flood, want 1", n)
		}
		time.Sleep(listChangeWindow)
		synctest.Wait()
		if n := host.count(); n != 2 {
			t.Fatalf("the host got %d notifications after the flood, want 2", n)
		}
		if n := out.lines("told hosts a list changed"); n != 2 {
			t.Fatalf("%d log lines, want 2", n)
		}
		time.Sleep(2 * listChangeWindow)
		s.ToolsChanged()
		if n := host.count(); n != 3 {
			t.Fatalf("a change after a quiet window: %d notifications, want 3 at once", n)
		}
	})
}

// TestCloseStopsTimers: a Server closed while a list-change notification
// and a count of refused requests wait for their windows sends and logs
// nothing afterwards, and leaves no timer behind.
func TestCloseStopsTimers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lockedBuffer
		s := New(nil, nil, &Options{Logger: slog.New(slog.NewTextHandler(&out, nil))})
		host := &countSink{}
		s.watchLegacy(&hostSession{}, host)
		s.ToolsChanged()
		s.ToolsChanged() // the second waits for the window's end
		face := s.HTTP(nil)
		h := face.Handler(hosthttp.Access{Addr: "127.0.0.1:7777", Tokens: testTokens{"right": ""}})
		for range 2 {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7777/mcp", strings.NewReader("{}"))
			r.Header.Set("Authorization", "Bearer wrong")
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
		face.Close()
		s.Close()
		before := out.String()
		time.Sleep(2 * repeatWindow)
		synctest.Wait()
		if n := host.count(); n != 1 {
			t.Errorf("the host got %d notifications, want only the first: the pending one was sent after Close", n)
		}
		if after := out.String(); after != before {
			t.Errorf("logged after Close:\n%s", strings.TrimPrefix(after, before))
		}
		s.ToolsChanged() // after Close: nothing pending, nothing started
		synctest.Wait()
	})
}
