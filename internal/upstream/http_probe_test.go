package upstream

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/mcp"
)

// TestHTTPProbe: the era comes from the bodies of the answers, never from
// one status code. Each case scripts the answer to server/discover (and,
// for the fallbacks, to initialize) and checks what mcpx settled on: the
// transport, the revision, what it asked, and what it cached.
func TestHTTPProbe(t *testing.T) {
	type answer func(w http.ResponseWriter, in *inbound)
	status := func(code int, body string) answer {
		return func(w http.ResponseWriter, in *inbound) {
			if body != "" {
				w.Header().Set("Content-Type", "text/plain")
			}
			w.WriteHeader(code)
			io.WriteString(w, body)
		}
	}
	jsonAnswer := func(code int, body func(in *inbound) string) answer {
		return func(w http.ResponseWriter, in *inbound) { replyJSON(w, code, body(in)) }
	}
	discoverResult := func(versions string) answer {
		return jsonAnswer(200, func(in *inbound) string {
			return result(in, `{"resultType":"complete","supportedVersions":`+versions+`,"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"m","version":"1"}}}`)
		})
	}
	for _, tc := range []struct {
		name     string
		discover answer
		init     answer // nil: a legacy session as legacyScript makes it
		wantKind eraKind
		wantErr  string // the start fails, saying this
		noInit   bool   // initialize must not be tried
	}{
		{name: "DiscoverResult", discover: discoverResult(`["2026-07-28","2025-11-25"]`), wantKind: eraModern, noInit: true},
		{name: "DiscoverResult as a stream", discover: func(w http.ResponseWriter, in *inbound) {
			sseOpen(w)
			sseSend(w, event("", result(in, `{"supportedVersions":["2026-07-28"],"capabilities":{}}`)))
		}, wantKind: eraModern, noInit: true},
		{name: "404 with -32601: modern without discover", discover: jsonAnswer(404, func(in *inbound) string {
			return rpcError(in, -32601, "Method not found", "")
		}), wantKind: eraModern, noInit: true},
		{name: "-32020 is a modern refusal, no fallback", discover: jsonAnswer(400, func(in *inbound) string {
			return rpcError(in, mcp.CodeHeaderMismatch, "Header mismatch", "")
		}), wantErr: "refused server/discover", noInit: true},
		{name: "-32021 is a modern refusal, no fallback", discover: jsonAnswer(400, func(in *inbound) string {
			return rpcError(in, mcp.CodeMissingRequiredCapability, "Missing capability", `{"requiredCapabilities":{}}`)
		}), wantErr: "refused server/discover", noInit: true},
		{name: "DiscoverResult naming legacy revisions only (go-sdk stateful)", discover: discoverResult(`["2025-11-25","2025-06-18"]`), wantKind: eraLegacy},
		{name: "-32022 naming legacy revisions only", discover: jsonAnswer(400, func(in *inbound) string {
			return rpcError(in, mcp.CodeUnsupportedProtocolVersion, "Unsupported protocol version", `{"supported":["2025-11-25"],"requested":"2026-07-28"}`)
		}), wantKind: eraLegacy},
		{name: "400 with -32000 (TypeScript SDK v1)", discover: jsonAnswer(400, func(in *inbound) string {
			return rpcError(nil, -32000, "Bad Request: No valid session ID provided", "")
		}), wantKind: eraLegacy},
		{name: "404 with -32601 on a 200 is no modern sign", discover: jsonAnswer(200, func(in *inbound) string {
			return rpcError(in, -32601, "Method not found", "")
		}), wantKind: eraLegacy},
		{name: "bare 404", discover: status(404, "404 page not found"), wantKind: eraLegacy},
		{name: "bare 405", discover: status(405, ""), wantKind: eraLegacy},
		{name: "bare 400", discover: status(400, ""), wantKind: eraLegacy},
		{name: "500", discover: status(500, "oops"), wantKind: eraLegacy},
		{name: "200 with HTML", discover: func(w http.ResponseWriter, in *inbound) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>hello</html>")
		}, wantKind: eraLegacy},
		{name: "202 with nothing", discover: status(202, ""), wantKind: eraLegacy},
		{name: "silence beyond the probe timeout", discover: func(w http.ResponseWriter, in *inbound) {
			select {
			case <-in.Ctx.Done():
			case <-time.After(wait):
			}
		}, wantKind: eraLegacy},
		{name: "initialize refused without JSON-RPC: HTTP+SSE", discover: status(404, "Cannot POST /sse"), init: status(404, "Cannot POST /sse"), wantKind: eraSSE},
		{name: "initialize refused with 405: HTTP+SSE", discover: status(405, ""), init: status(405, ""), wantKind: eraSSE},
		{name: "initialize refused with 400: HTTP+SSE", discover: status(400, "bad"), init: status(400, "bad"), wantKind: eraSSE},
		{name: "initialize refused with a JSON-RPC error is no HTTP+SSE", discover: status(400, ""), init: jsonAnswer(400, func(in *inbound) string {
			return rpcError(in, -32602, "Unsupported protocol version", `{"supported":["2024-10-07"]}`)
		}), wantErr: "Unsupported protocol version"},
		{name: "401 fails the start", discover: status(401, "who are you"), wantErr: "HTTP 401", noInit: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var up *scripted
			legacy := legacyScript("2025-11-25", "sess", func(w http.ResponseWriter, in *inbound) {
				replyJSON(w, 200, result(in, `{"tools":[]}`))
			})
			up = newScripted(t, func(w http.ResponseWriter, in *inbound) {
				switch {
				case in.Method == http.MethodGet && tc.wantKind == eraSSE:
					serveSSE(up, w, in)
				case strings.HasPrefix(in.URI, "/messages"):
					postSSE(up, w, in)
				case in.rpcMethod() == mcp.MethodDiscover:
					tc.discover(w, in)
				case in.rpcMethod() == mcp.MethodInitialize && tc.init != nil:
					tc.init(w, in)
				case tc.wantKind == eraModern && in.Msg != nil:
					replyJSON(w, 200, result(in, `{"tools":[]}`))
				default:
					legacy(w, in)
				}
			})
			p := startPool(t, &config.Server{URL: up.ts.URL + "/mcp"}, &Options{ProbeTimeout: 300 * time.Millisecond})
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			s, err := p.Session(ctx, "up")
			if tc.noInit && up.count(isRPC(mcp.MethodInitialize)) != 0 {
				t.Errorf("initialize was tried")
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("start: %v, want an error saying %q", err, tc.wantErr)
				}
				if _, cached := p.http.era(originKey(up.ts.URL + "/mcp")); cached {
					t.Errorf("a failed start cached an era")
				}
				return
			}
			if err != nil {
				t.Fatalf("start: %v", err)
			}
			if kind := kindOf(s); kind != tc.wantKind {
				t.Fatalf("settled on %v (version %s), want %v", kind, s.Version(), tc.wantKind)
			}
			if era, _ := p.http.era(originKey(up.ts.URL + "/mcp")); era.kind != tc.wantKind {
				t.Errorf("cached %v, want %v", era.kind, tc.wantKind)
			}
			if _, err := s.Tools(ctx); err != nil {
				t.Errorf("listing tools in the settled era: %v", err)
			}
			t.Logf("settled on %v, version %s", tc.wantKind, s.Version())
		})
	}
}

func kindOf(s *Session) eraKind {
	switch s.t.(type) {
	case *modernTransport:
		return eraModern
	case *legacyTransport:
		return eraLegacy
	case *sseTransport:
		return eraSSE
	}
	return 0
}

// TestHTTPEraCache: the era found for an origin is reused by the next
// session without probing; when the cached era fails to start, the server
// is probed again and the new answer cached.
func TestHTTPEraCache(t *testing.T) {
	var mu sync.Mutex
	modern := true
	modernH := modernScript(func(w http.ResponseWriter, in *inbound) { replyJSON(w, 200, result(in, `{"tools":[]}`)) })
	legacyH := legacyScript("2025-11-25", "sess", func(w http.ResponseWriter, in *inbound) { replyJSON(w, 200, result(in, `{"tools":[]}`)) })
	up := newScripted(t, func(w http.ResponseWriter, in *inbound) {
		mu.Lock()
		m := modern
		mu.Unlock()
		if m {
			modernH(w, in)
			return
		}
		if in.rpcMethod() == mcp.MethodDiscover {
			http.NotFound(w, nil)
			return
		}
		legacyH(w, in)
	})
	p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
	restart := func() *Session {
		old := session(t, p)
		old.stop()
		return session(t, p)
	}
	s := session(t, p)
	if kindOf(s) != eraModern {
		t.Fatalf("the first MCP session made: %v", kindOf(s))
	}
	s = restart()
	if kindOf(s) != eraModern || up.count(isRPC(mcp.MethodDiscover)) != 2 {
		t.Fatalf("the next MCP session made: %v after %d discovers", kindOf(s), up.count(isRPC(mcp.MethodDiscover)))
	}
	mu.Lock()
	modern = false
	mu.Unlock()
	s = restart()
	if kindOf(s) != eraLegacy {
		t.Fatalf("after the server went legacy: %v", kindOf(s))
	}
	// The cached modern start failed (discover 404), then the probe (again
	// discover 404, then initialize).
	if n := up.count(isRPC(mcp.MethodDiscover)); n != 4 {
		t.Errorf("%d discovers, want 4", n)
	}
	if era, _ := p.http.era(originKey(up.ts.URL)); era.kind != eraLegacy {
		t.Errorf("cached %v, want legacy", era.kind)
	}
	// And now a legacy session starts without any discover.
	restart()
	if n := up.count(isRPC(mcp.MethodDiscover)); n != 4 {
		t.Errorf("%d discovers after a cached legacy start, want still 4", n)
	}
}

// TestHTTPConfiguredVersion: a configured revision skips the probe: a
// legacy one initializes at once at that revision, a modern one discovers.
func TestHTTPConfiguredVersion(t *testing.T) {
	up := newScripted(t, legacyScript("2025-06-18", "sess", func(w http.ResponseWriter, in *inbound) {
		replyJSON(w, 200, result(in, `{}`))
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL, ProtocolVersion: "2025-06-18"}, nil)
	session(t, p)
	if n := up.count(isRPC(mcp.MethodDiscover)); n != 0 {
		t.Errorf("%d discovers with a configured legacy revision", n)
	}
	init := up.waitFor("initialize", isRPC(mcp.MethodInitialize))
	if !strings.Contains(string(init.Body), `"protocolVersion":"2025-06-18"`) {
		t.Errorf("initialize asked %s", init.Body)
	}
}

// serveSSE serves the GET of an HTTP+SSE server: the endpoint event, then
// every message the server sends (queued by postSSE), until the exchange
// ends.
func serveSSE(up *scripted, w http.ResponseWriter, in *inbound) {
	sseOpen(w)
	sseSend(w, "event: endpoint\ndata: /messages?session=abc\n\n")
	sent := 0
	for {
		var out []string
		for _, req := range up.requests() {
			if strings.HasPrefix(req.URI, "/messages") && req.Msg != nil && req.Msg.IsRequest() {
				out = append(out, sseAnswer(req))
			}
		}
		for ; sent < len(out); sent++ {
			if out[sent] != "" {
				sseSend(w, "event: message\ndata: "+out[sent]+"\n\n")
			}
		}
		select {
		case <-in.Ctx.Done():
			return
		case <-up.quit:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// sseAnswer is what the HTTP+SSE script answers a request with.
func sseAnswer(in *inbound) string {
	switch in.rpcMethod() {
	case mcp.MethodInitialize:
		return result(in, `{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"0"}}`)
	case "hold":
		return ""
	}
	return result(in, `{"tools":[]}`)
}

// postSSE answers a POST to the message endpoint: 202, the answer going on
// the stream.
func postSSE(up *scripted, w http.ResponseWriter, in *inbound) {
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, "Accepted")
}

// TestHTTPSSE: type "sse" forces HTTP+SSE: a GET, the endpoint event
// (relative, resolved against the URL), every message POSTed there with the
// configured headers, answers on the stream; a cancel POSTs
// notifications/cancelled there; stopping closes the stream.
func TestHTTPSSE(t *testing.T) {
	var up *scripted
	up = newScripted(t, func(w http.ResponseWriter, in *inbound) {
		switch {
		case in.Method == http.MethodGet && in.URI == "/sse":
			serveSSE(up, w, in)
		case strings.HasPrefix(in.URI, "/messages"):
			postSSE(up, w, in)
		default:
			http.NotFound(w, nil)
		}
	})
	p := startPool(t, &config.Server{Transport: config.TransportSSE, URL: up.ts.URL + "/sse", Headers: map[string]string{"Authorization": "Bearer s"}}, nil)
	s := session(t, p)
	if s.Version() != "2024-11-05" || kindOf(s) != eraSSE {
		t.Fatalf("version %q, %v", s.Version(), kindOf(s))
	}
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := s.Start("hold", nil, nil, StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	up.waitFor("the held request", isRPC("hold"))
	if !s.Cancel(r, "no longer needed") {
		t.Error("Cancel reported the upstream not told")
	}
	c := up.waitFor("the cancellation", isRPC(mcp.MethodCancelled))
	if !strings.Contains(string(c.Body), fmt.Sprintf(`"requestId":%d`, r.ID)) || !strings.Contains(string(c.Body), "no longer needed") {
		t.Errorf("cancellation %s", c.Body)
	}
	get := up.waitFor("the stream", func(in *inbound) bool { return in.Method == http.MethodGet })
	stopPool(t, p)
	select {
	case <-get.Ctx.Done():
	case <-time.After(wait):
		t.Error("stopping did not close the stream")
	}
	for _, in := range up.requests() {
		if in.Header.Get("Authorization") != "Bearer s" {
			t.Errorf("%s %s without the configured header", in.Method, in.URI)
		}
		if in.Method == http.MethodPost && in.URI != "/messages?session=abc" {
			t.Errorf("POST to %s", in.URI)
		}
		if in.rpcMethod() == mcp.MethodDiscover {
			t.Errorf("a configured sse server was probed")
		}
	}
}

// TestHTTPSSEStreamEnds: the end of the HTTP+SSE stream ends the session.
func TestHTTPSSEStreamEnds(t *testing.T) {
	var up *scripted
	end := make(chan struct{})
	up = newScripted(t, func(w http.ResponseWriter, in *inbound) {
		switch {
		case in.Method == http.MethodGet:
			ctx, cancel := context.WithCancel(in.Ctx)
			go func() { <-end; cancel() }()
			serveSSE(up, w, &inbound{Ctx: ctx})
		default:
			postSSE(up, w, in)
		}
	})
	p := startPool(t, &config.Server{Transport: config.TransportSSE, URL: up.ts.URL}, nil)
	s := session(t, p)
	r, err := s.Start("hold", nil, nil, StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	up.waitFor("the held request", isRPC("hold"))
	close(end)
	select {
	case <-r.Done():
		if _, err := r.Result(); err == nil || !strings.Contains(err.Error(), "closed its event stream") {
			t.Errorf("err = %v", err)
		}
	case <-time.After(wait):
		t.Fatal("the call outlived the stream")
	}
	select {
	case <-s.Done():
	case <-time.After(wait):
		t.Fatal("the session outlived its stream")
	}
}

// TestHTTPSSEForeignEndpoint: an endpoint on another origin is refused.
func TestHTTPSSEForeignEndpoint(t *testing.T) {
	up := newScripted(t, nil)
	up.setHandler(func(w http.ResponseWriter, in *inbound) {
		sseOpen(w)
		sseSend(w, "event: endpoint\ndata: http://evil.example:1/messages\n\n")
		up.hold(in)
	})
	p := startPool(t, &config.Server{Transport: config.TransportSSE, URL: up.ts.URL}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := p.Session(ctx, "up"); err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Fatalf("start: %v", err)
	}
}
