package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// The HTTP transports against scripted servers: raw handlers that answer
// exactly as each test says and record everything mcpx sends.

// TestHTTPLegacySession: the legacy flow. initialize carries no session id
// and no revision header; every later message carries the session id the
// server gave and MCP-Protocol-Version; every request carries the
// configured headers and accepts both answer types; a JSON answer and an
// SSE answer both arrive; stopping sends DELETE with the session id.
func TestHTTPLegacySession(t *testing.T) {
	up := newScripted(t, legacyScript("2025-06-18", "sess-1", func(w http.ResponseWriter, in *inbound) {
		switch in.rpcMethod() {
		case mcp.MethodToolsList:
			sseOpen(w)
			sseSend(w, event("e1", result(in, `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`)))
		case mcp.MethodToolsCall:
			replyJSON(w, 200, result(in, `{"content":[{"type":"text","text":"hi"}]}`))
		default:
			replyJSON(w, 200, rpcError(in, -32601, "no", ""))
		}
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer secret-1"}}, nil)
	s := session(t, p)
	if s.Version() != "2025-06-18" || s.ServerInfo().Name != "scripted" {
		t.Fatalf("version %q, server %+v", s.Version(), s.ServerInfo())
	}
	tools, err := s.Tools(context.Background())
	if err != nil || len(tools) != 1 || tools[0].Name != "echo" {
		t.Fatalf("Tools() = %+v, %v", tools, err)
	}
	res, err := call(t, s, mcp.MethodToolsCall, `{"name":"echo","arguments":{}}`)
	if err != nil || !strings.Contains(string(res), `"hi"`) {
		t.Fatalf("tools/call = %s, %v", res, err)
	}
	if _, ok := p.http.era(originKey(up.ts.URL + "/mcp")); !ok {
		t.Error("the era was not cached")
	}
	up.waitFor("the GET of the standalone stream", func(in *inbound) bool { return in.Method == http.MethodGet })
	stopPool(t, p)
	up.waitFor("DELETE", func(in *inbound) bool { return in.Method == http.MethodDelete })

	sawInit := false
	for _, in := range up.requests() {
		if in.Header.Get("Authorization") != "Bearer secret-1" {
			t.Errorf("%s %s without the configured header", in.Method, in.Body)
		}
		if in.URI != "/mcp" {
			t.Errorf("%s went to %s", in.Method, in.URI)
		}
		if in.Method == http.MethodPost {
			if in.Header.Get("Accept") != "application/json, text/event-stream" || in.Header.Get("Content-Type") != "application/json" {
				t.Errorf("POST %s: Accept %q, Content-Type %q", in.Body, in.Header.Get("Accept"), in.Header.Get("Content-Type"))
			}
		}
		switch {
		case in.rpcMethod() == mcp.MethodDiscover:
			if sawInit {
				t.Errorf("server/discover after initialize")
			}
		case in.rpcMethod() == mcp.MethodInitialize:
			sawInit = true
			if in.Header.Get("Mcp-Session-Id") != "" || in.Header.Get("MCP-Protocol-Version") != "" {
				t.Errorf("initialize carried session headers: %v", in.Header)
			}
		case sawInit:
			if got := in.Header.Get("Mcp-Session-Id"); got != "sess-1" {
				t.Errorf("%s %s: session id %q, want sess-1", in.Method, in.Body, got)
			}
			if got := in.Header.Get("MCP-Protocol-Version"); got != "2025-06-18" {
				t.Errorf("%s %s: MCP-Protocol-Version %q, want 2025-06-18", in.Method, in.Body, got)
			}
		}
	}
	if up.count(isRPC(mcp.MethodInitialized)) != 1 {
		t.Errorf("notifications/initialized posted %d times", up.count(isRPC(mcp.MethodInitialized)))
	}
	if up.count(func(in *inbound) bool { return in.Method == http.MethodGet }) != 1 {
		t.Errorf("want one GET for the standalone stream (answered 405); got:\n%s", up.dump())
	}
}

// stopPool stops the pool's sessions as shutdown does, and waits.
func stopPool(t testing.TB, p *Pool) {
	t.Helper()
	p.mu.Lock()
	var live []*Session
	for _, en := range p.entries {
		if en.sess != nil {
			live = append(live, en.sess)
		}
	}
	p.mu.Unlock()
	for _, s := range live {
		s.stop()
	}
}

// TestHTTPLegacy2025_03_26: a 2025-03-26 session sends no
// MCP-Protocol-Version (the header came in 2025-06-18), but its session id.
func TestHTTPLegacy2025_03_26(t *testing.T) {
	up := newScripted(t, legacyScript("2025-03-26", "old-sess", func(w http.ResponseWriter, in *inbound) {
		replyJSON(w, 200, result(in, `{}`))
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
	s := session(t, p)
	if _, err := call(t, s, "ping", `{}`); err != nil {
		t.Fatal(err)
	}
	in := up.waitFor("ping", isRPC("ping"))
	if in.Header.Get("Mcp-Session-Id") != "old-sess" || in.Header.Get("MCP-Protocol-Version") != "" {
		t.Errorf("ping headers: %v", in.Header)
	}
}

// TestHTTPLegacySessionExpired: a 404 to a request carrying the session id
// fails the session with ErrSessionExpired, naming the server; the session
// ends, and the next use starts a new one with a new initialize.
func TestHTTPLegacySessionExpired(t *testing.T) {
	var mu sync.Mutex
	expired := map[string]bool{}
	sessions := 0
	up := newScripted(t, nil)
	up.setHandler(func(w http.ResponseWriter, in *inbound) {
		mu.Lock()
		gone := expired[in.Header.Get("Mcp-Session-Id")]
		if in.rpcMethod() == mcp.MethodInitialize {
			sessions++
		}
		sid := fmt.Sprintf("s%d", sessions)
		mu.Unlock()
		if gone {
			http.NotFound(w, nil)
			return
		}
		legacyScript("2025-11-25", sid, func(w http.ResponseWriter, in *inbound) {
			replyJSON(w, 200, result(in, `{"content":[]}`))
		})(w, in)
	})
	p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
	s := session(t, p)
	if _, err := call(t, s, mcp.MethodToolsCall, `{"name":"a"}`); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	expired["s1"] = true
	mu.Unlock()
	_, err := call(t, s, mcp.MethodToolsCall, `{"name":"a"}`)
	if !errors.Is(err, ErrSessionExpired) || !strings.Contains(err.Error(), `"up"`) {
		t.Fatalf("call on an expired session: %v; want ErrSessionExpired naming the server", err)
	}
	select {
	case <-s.Done():
	case <-time.After(wait):
		t.Fatal("the expired session did not end")
	}
	s2 := session(t, p)
	if s2 == s {
		t.Fatal("the pool kept the expired session")
	}
	if _, err := call(t, s2, mcp.MethodToolsCall, `{"name":"a"}`); err != nil {
		t.Fatalf("call on the new session: %v", err)
	}
	last := up.requests()[len(up.requests())-1]
	if last.Header.Get("Mcp-Session-Id") != "s2" {
		t.Errorf("the new session's call carried session %q, want s2", last.Header.Get("Mcp-Session-Id"))
	}
	if n := up.count(isRPC(mcp.MethodInitialize)); n != 2 {
		t.Errorf("%d initialize requests, want 2", n)
	}
	// No DELETE for a session the server already ended.
	if n := up.count(func(in *inbound) bool {
		return in.Method == http.MethodDelete && in.Header.Get("Mcp-Session-Id") == "s1"
	}); n != 0 {
		t.Errorf("DELETE sent for the expired session")
	}
}

// TestHTTPLegacyResume: the server closes a request's stream after an
// event id, before the response: mcpx waits the stream's retry delay, then
// resumes it with GET and Last-Event-ID, and gets the progress and the
// response that follow. A closed stream is neither a result nor a failure.
func TestHTTPLegacyResume(t *testing.T) {
	for _, tc := range []struct {
		name      string
		retry     string
		wantDelay time.Duration
	}{
		{"server retry", "retry: 300\n", 300 * time.Millisecond},
		{"default retry", "", defaultRetry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var closedAt time.Time
			var mu sync.Mutex
			gets := 0
			up := newScripted(t, legacyScript("2025-11-25", "sess", func(w http.ResponseWriter, in *inbound) {
				sseOpen(w)
				sseSend(w, "id: ev-1\n"+tc.retry+"data: \n\n")
				sseSend(w, event("ev-2", progress(in, 1)))
				mu.Lock()
				closedAt = time.Now()
				mu.Unlock()
				// The handler returns: the stream is closed without a response.
			}))
			base := up.handle
			up.setHandler(func(w http.ResponseWriter, in *inbound) {
				if in.Method == http.MethodGet && in.Header.Get("Last-Event-ID") != "" {
					mu.Lock()
					gets++
					n := gets
					mu.Unlock()
					req := up.waitFor("the call", isRPC(mcp.MethodToolsCall))
					sseOpen(w)
					if n == 1 {
						// First resumption: more progress, then closed again.
						sseSend(w, "retry: 100\n"+event("ev-3", progress(req, 2)))
						return
					}
					sseSend(w, event("ev-4", result(req, `{"content":[{"type":"text","text":"resumed"}]}`)))
					up.hold(in)
					return
				}
				base(w, in)
			})
			p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
			s := session(t, p)
			var got []string
			var pmu sync.Mutex
			r, err := s.Start(mcp.MethodToolsCall, mustObject(`{"name":"slow"}`), nil, StartOptions{OnProgress: func(params json.RawMessage) {
				pmu.Lock()
				got = append(got, string(params))
				pmu.Unlock()
			}})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-r.Done():
			case <-time.After(wait):
				t.Fatal("no answer")
			}
			res, err := r.Result()
			if err != nil || !strings.Contains(string(res), "resumed") {
				t.Fatalf("result %s, %v", res, err)
			}
			pmu.Lock()
			if len(got) != 2 {
				t.Errorf("progress delivered: %q, want 2 notifications", got)
			}
			pmu.Unlock()
			resumes := []*inbound{}
			for _, in := range up.requests() {
				if in.Method == http.MethodGet && in.Header.Get("Last-Event-ID") != "" {
					resumes = append(resumes, in)
				}
			}
			if len(resumes) != 2 {
				t.Fatalf("%d resumptions, want 2:\n%s", len(resumes), up.dump())
			}
			if id := resumes[0].Header.Get("Last-Event-ID"); id != "ev-2" {
				t.Errorf("first resumption after %q, want ev-2", id)
			}
			if id := resumes[1].Header.Get("Last-Event-ID"); id != "ev-3" {
				t.Errorf("second resumption after %q, want ev-3", id)
			}
			mu.Lock()
			delay := resumes[0].At.Sub(closedAt)
			mu.Unlock()
			if delay < tc.wantDelay-20*time.Millisecond {
				t.Errorf("resumed %v after the stream closed, before the retry delay %v", delay, tc.wantDelay)
			}
			if gap := resumes[1].At.Sub(resumes[0].At); gap < 100*time.Millisecond {
				t.Errorf("the second resumption came %v after the first, before its retry of 100ms", gap)
			}
			for _, in := range resumes {
				if in.Header.Get("Mcp-Session-Id") != "sess" || in.Header.Get("Accept") != "text/event-stream" {
					t.Errorf("resumption headers: %v", in.Header)
				}
			}
			t.Logf("resumed %v after the close (retry %v)", delay, tc.wantDelay)
		})
	}
}

func mustObject(s string) *jsonrpc.Object {
	obj, err := jsonrpc.ParseObject([]byte(s))
	if err != nil {
		panic(err)
	}
	return obj
}

// TestHTTPLegacyStreamClosedWithoutID: a stream closed before the response
// with no event id cannot be resumed: the request fails, saying so.
func TestHTTPLegacyStreamClosedWithoutID(t *testing.T) {
	up := newScripted(t, legacyScript("2025-11-25", "sess", func(w http.ResponseWriter, in *inbound) {
		sseOpen(w)
		sseSend(w, event("", progress(in, 1)))
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
	_, err := call(t, session(t, p), mcp.MethodToolsCall, `{"name":"a"}`)
	if err == nil || !strings.Contains(err.Error(), "no event id to resume from") {
		t.Fatalf("err = %v", err)
	}
}

// TestHTTPLegacyServerRequest: a ping the server sends on a request's
// stream is answered by a POST carrying the session, before the server
// sends the response.
func TestHTTPLegacyServerRequest(t *testing.T) {
	var up *scripted
	up = newScripted(t, legacyScript("2025-11-25", "sess", func(w http.ResponseWriter, in *inbound) {
		sseOpen(w)
		sseSend(w, event("1", `{"jsonrpc":"2.0","id":"srv-ping","method":"ping"}`))
		up.waitFor("the answer to the ping", func(in *inbound) bool {
			return in.Msg != nil && in.Msg.IsResponse() && in.Msg.ID.String() == `"srv-ping"`
		})
		sseSend(w, event("2", result(in, `{"content":[]}`)))
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
	if _, err := call(t, session(t, p), mcp.MethodToolsCall, `{"name":"a"}`); err != nil {
		t.Fatal(err)
	}
	pong := up.waitFor("the pong", func(in *inbound) bool { return in.Msg != nil && in.Msg.IsResponse() })
	if string(pong.Msg.Result) != "{}" || pong.Header.Get("Mcp-Session-Id") != "sess" || pong.Method != http.MethodPost {
		t.Errorf("pong: %s %s %v", pong.Method, pong.Body, pong.Header)
	}
}

// TestHTTPLegacyCancel: cancelling a running request posts
// notifications/cancelled with mcpx's own request id and the reason, in
// the session, then closes the request's stream.
func TestHTTPLegacyCancel(t *testing.T) {
	var up *scripted
	up = newScripted(t, legacyScript("2025-11-25", "sess", func(w http.ResponseWriter, in *inbound) {
		sseOpen(w)
		sseSend(w, event("1", progress(in, 1)))
		up.hold(in)
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
	s := session(t, p)
	r := startProgressing(t, s)
	callIn := up.waitFor("the call", isRPC(mcp.MethodToolsCall))
	if !s.Cancel(r, "the host gave up") {
		t.Error("Cancel reported that the upstream was not told")
	}
	c := up.waitFor("the cancellation", isRPC(mcp.MethodCancelled))
	var params mcp.CancelledParams
	if err := json.Unmarshal(c.Msg.Params, &params); err != nil {
		t.Fatal(err)
	}
	if string(params.RequestID) != fmt.Sprint(r.ID) || params.Reason != "the host gave up" {
		t.Errorf("cancellation params %s, want requestId %d and the reason", c.Msg.Params, r.ID)
	}
	if c.Header.Get("Mcp-Session-Id") != "sess" {
		t.Errorf("cancellation without the session id")
	}
	if string(callIn.Msg.ID.Raw()) != fmt.Sprint(r.ID) {
		t.Errorf("the call went out as id %s, not mcpx's %d", callIn.Msg.ID, r.ID)
	}
	select {
	case <-callIn.Ctx.Done():
	case <-time.After(wait):
		t.Error("the cancelled request's stream stayed open")
	}
}

// TestHTTPLegacyNoCancelForInitialize is covered by Session.Cancel; here:
// a request still waiting for a slot was never sent, so cancelling it
// posts nothing (see TestHTTPConcurrencyLimit).

// TestHTTPJSONErrorAnswer: a 400 whose body is a JSON-RPC error is the
// answer to the request: the caller gets that *jsonrpc.Error.
func TestHTTPJSONErrorAnswer(t *testing.T) {
	up := newScripted(t, legacyScript("2025-11-25", "sess", func(w http.ResponseWriter, in *inbound) {
		replyJSON(w, 400, rpcError(in, -32602, "Unknown tool: nope", ""))
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
	_, err := call(t, session(t, p), mcp.MethodToolsCall, `{"name":"nope"}`)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 {
		t.Fatalf("err = %v, want the upstream's -32602", err)
	}
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != 400 {
		t.Errorf("err = %v, want an *HTTPError with status 400", err)
	}
	// A plain error status without a JSON-RPC body says what came.
	up.setHandler(legacyScript("2025-11-25", "sess", func(w http.ResponseWriter, in *inbound) {
		http.Error(w, "upstream exploded", http.StatusInternalServerError)
	}))
	_, err = call(t, session(t, p), mcp.MethodToolsCall, `{"name":"x"}`)
	if err == nil || !strings.Contains(err.Error(), "HTTP 500") || !strings.Contains(err.Error(), "upstream exploded") || errors.As(err, &rpcErr) {
		t.Errorf("err = %v", err)
	}
}

// TestHTTPLegacyStandaloneStream: the standalone GET stream carries what
// the server starts itself: a ping, answered by a POST; after the server
// closes it, it is reopened after the retry delay with Last-Event-ID; and
// the answer to a request the server accepted with 202 comes on it.
func TestHTTPLegacyStandaloneStream(t *testing.T) {
	var up *scripted
	var mu sync.Mutex
	gets := 0
	up = newScripted(t, legacyScript("2025-11-25", "sess", func(w http.ResponseWriter, in *inbound) {
		w.WriteHeader(http.StatusAccepted) // the answer comes on the GET stream
	}))
	base := up.handle
	up.setHandler(func(w http.ResponseWriter, in *inbound) {
		if in.Method != http.MethodGet {
			base(w, in)
			return
		}
		mu.Lock()
		gets++
		n := gets
		mu.Unlock()
		sseOpen(w)
		if n == 1 {
			sseSend(w, "id: g1\nretry: 50\n"+event("", `{"jsonrpc":"2.0","id":7,"method":"ping"}`))
			up.waitFor("the pong", func(in *inbound) bool { return in.Msg != nil && in.Msg.IsResponse() })
			return // closed: the client reconnects
		}
		req := up.waitFor("the call", isRPC(mcp.MethodToolsCall))
		sseSend(w, event("g2", result(req, `{"content":[{"type":"text","text":"via GET"}]}`)))
		up.hold(in)
	})
	p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
	s := session(t, p)
	up.waitFor("the second GET", func(in *inbound) bool { return in.Method == http.MethodGet && in.Header.Get("Last-Event-ID") != "" })
	res, err := call(t, s, mcp.MethodToolsCall, `{"name":"a"}`)
	if err != nil || !strings.Contains(string(res), "via GET") {
		t.Fatalf("call: %s, %v", res, err)
	}
	pong := up.waitFor("the pong", func(in *inbound) bool { return in.Msg != nil && in.Msg.IsResponse() })
	if pong.Msg.ID.String() != "7" || string(pong.Msg.Result) != "{}" || pong.Header.Get("Mcp-Session-Id") != "sess" {
		t.Errorf("pong %s", pong.Body)
	}
	var getReqs []*inbound
	for _, in := range up.requests() {
		if in.Method == http.MethodGet {
			getReqs = append(getReqs, in)
		}
	}
	if len(getReqs) < 2 || getReqs[0].Header.Get("Last-Event-ID") != "" || getReqs[1].Header.Get("Last-Event-ID") != "g1" {
		t.Fatalf("GETs: %d, Last-Event-ID %q then %q", len(getReqs), getReqs[0].Header.Get("Last-Event-ID"), getReqs[1].Header.Get("Last-Event-ID"))
	}
	if gap := getReqs[1].At.Sub(pong.At); gap < 40*time.Millisecond {
		t.Errorf("the stream was reopened %v after it closed, before its retry of 50ms", gap)
	}
}

// TestHTTPLegacyAcceptedWithoutStream: a request answered 202 Accepted,
// with no standalone stream to bring its answer, fails at once, saying so.
func TestHTTPLegacyAcceptedWithoutStream(t *testing.T) {
	up := newScripted(t, legacyScript("2025-11-25", "sess", func(w http.ResponseWriter, in *inbound) {
		w.WriteHeader(http.StatusAccepted)
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
	s := session(t, p)
	// The handshake waited for the GET's answer (the session is ready
	// once its standalone stream is open or refused): the 405 is read.
	up.waitFor("the GET", func(in *inbound) bool { return in.Method == http.MethodGet })
	_, err := call(t, s, mcp.MethodToolsCall, `{"name":"a"}`)
	if err == nil || !strings.Contains(err.Error(), "HTTP 202") || !strings.Contains(err.Error(), "no stream") {
		t.Fatalf("err = %v", err)
	}
}
