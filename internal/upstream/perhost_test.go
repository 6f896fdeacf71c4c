package upstream

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/mcp"
)

// perHostUpstream is a legacy HTTP upstream that gives each initialize a
// session id of its own ("s1", "s2" ...), as a real one does.
func perHostUpstream(t *testing.T) *scripted {
	var n atomic.Int64
	return newScripted(t, func(w http.ResponseWriter, in *inbound) {
		if in.rpcMethod() == mcp.MethodInitialize {
			id := "s" + strconv.FormatInt(n.Add(1), 10)
			legacyScript("2025-06-18", id, nil)(w, in)
			return
		}
		legacyScript("2025-06-18", "", func(w http.ResponseWriter, in *inbound) {
			replyJSON(w, 200, result(in, `{"content":[{"type":"text","text":"`+in.Header.Get("Mcp-Session-Id")+`"}]}`))
		})(w, in)
	})
}

func sessionFor(t *testing.T, p *Pool, name, host string) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	s, err := p.SessionFor(ctx, name, host)
	if err != nil {
		t.Fatalf("SessionFor(%q, %q): %v", name, host, err)
	}
	return s
}

func endedWith(t *testing.T, s *Session, what string) error {
	t.Helper()
	select {
	case <-s.Done():
		return s.Err()
	case <-time.After(wait):
		t.Fatalf("the session of %s did not end within %s", what, wait)
		return nil
	}
}

// TestPoolPerHost: a perHost server gives each host key a session of its
// own (one upstream session each, by its id), the same one on each use,
// beside the shared one that an empty key gets; EndHost stops only that
// host's session (DELETE with its id), with an error that wraps
// ErrStopped; Status counts them; the idle stop ends a host session and
// forgets its key; a reload that changes the server stops the rest.
func TestPoolPerHost(t *testing.T) {
	up := perHostUpstream(t)
	var last *Session  // a host's session, live at the end
	t.Cleanup(func() { // after startPool's cleanup, which runs first
		if last != nil && last.Err() == nil {
			t.Error("a host's session outlived the pool")
		}
	})
	srv := &config.Server{URL: up.ts.URL + "/mcp", PerHost: true, IdleStop: time.Minute}
	p := startPool(t, srv, nil)

	shared := sessionFor(t, p, "up", "")
	a := sessionFor(t, p, "up", "host-1")
	b := sessionFor(t, p, "up", "host-2")
	if a == shared || b == shared || a == b {
		t.Fatal("the hosts and the listings share a session")
	}
	if again := sessionFor(t, p, "up", "host-1"); again != a {
		t.Error("a host's second use started another session")
	}
	if s, _ := p.Session(context.Background(), "up"); s != shared {
		t.Error("Session is not the shared session")
	}
	for s, want := range map[*Session]string{shared: "s1", a: "s2", b: "s3"} {
		res, err := call(t, s, mcp.MethodToolsCall, `{"name":"x","arguments":{}}`)
		if err != nil || !strings.Contains(string(res), `"`+want+`"`) {
			t.Errorf("call = %s, %v; want it on upstream session %s", res, err, want)
		}
	}
	if st := p.Status()[0]; !st.PerHost || st.HostSessions != 2 || st.State != "ready" {
		t.Errorf("status %+v, want perHost with 2 host sessions", st)
	}

	p.EndHost("host-1")
	if err := endedWith(t, a, "host-1"); !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "host-1") {
		t.Errorf("host-1's session ended with %v, want ErrStopped naming the host", err)
	}
	up.waitFor("DELETE of host-1's session", func(in *inbound) bool {
		return in.Method == http.MethodDelete && in.Header.Get("Mcp-Session-Id") == "s2"
	})
	if b.Err() != nil || shared.Err() != nil {
		t.Fatalf("another host's session ended: %v, %v", b.Err(), shared.Err())
	}
	if st := p.Status()[0]; st.HostSessions != 1 {
		t.Errorf("status counts %d host sessions after one left, want 1", st.HostSessions)
	}
	if c := sessionFor(t, p, "up", "host-1"); c == a {
		t.Error("a host key that came back got its ended session")
	}

	// host-1 (again) and host-2 are idle past the idle stop, as seen by
	// one look of the pool: both stop, and their keys are forgotten.
	p.tendOnce(time.Now().Add(2 * time.Minute))
	if err := endedWith(t, b, "host-2"); !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "without calls") {
		t.Errorf("idle host-2's session ended with %v", err)
	}
	p.mu.Lock()
	left := len(p.entries["up"].hosts)
	p.mu.Unlock()
	if left != 0 {
		t.Errorf("%d host entries kept after the idle stop", left)
	}

	d := sessionFor(t, p, "up", "host-3")
	changed := *srv
	changed.IdleStop = 0
	res := p.Reload(&config.Config{Servers: map[string]*config.Server{"up": &changed}})
	if len(res.Changed) != 1 {
		t.Fatalf("reload = %+v", res)
	}
	// Stopped by mcpx, not a crash (the metrics and the live view count
	// those): ErrStopped, saying why.
	if err := endedWith(t, d, "host-3"); !errors.Is(err, ErrStopped) || err.Error() != `server "up" was changed in the config` {
		t.Errorf("host-3's session ended with %v after a reload changed its server, want ErrStopped saying so", err)
	}
	// A host's session still running at shutdown: Run stops it, and
	// returns only once it has ended (startPool's cleanup waits for Run).
	last = sessionFor(t, p, "up", "host-4")
}

// TestPoolPerHostOff: without perHost, every host key gets the shared
// session.
func TestPoolPerHostOff(t *testing.T) {
	up := perHostUpstream(t)
	p := startPool(t, &config.Server{URL: up.ts.URL + "/mcp"}, nil)
	shared := sessionFor(t, p, "up", "")
	if a := sessionFor(t, p, "up", "host-1"); a != shared {
		t.Error("a host of a server without perHost got a session of its own")
	}
	p.EndHost("host-1")
	if shared.Err() != nil {
		t.Errorf("EndHost stopped the shared session: %v", shared.Err())
	}
	if st := p.Status()[0]; st.PerHost || st.HostSessions != 0 {
		t.Errorf("status %+v", st)
	}
}
