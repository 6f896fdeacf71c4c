package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// wait bounds every wait on something that must happen.
const wait = 10 * time.Second

// settle is how long a test waits for something that must not happen.
const settle = 200 * time.Millisecond

// inbound is one HTTP request a scripted server received.
type inbound struct {
	At     time.Time
	Method string
	URI    string
	Header http.Header
	Body   []byte
	Msg    *jsonrpc.Message // nil without a JSON-RPC body
	Ctx    context.Context  // ends when the exchange does
	Remote string           // the client's address: one per connection
}

// rpcMethod is the JSON-RPC method of the request, "" for a response or none.
func (in *inbound) rpcMethod() string {
	if in.Msg == nil {
		return ""
	}
	return in.Msg.Method
}

// scripted is an HTTP upstream whose handler a test writes.
type scripted struct {
	t    testing.TB
	ts   *httptest.Server
	quit chan struct{} // closed at cleanup: hanging handlers return

	mu     sync.Mutex
	log    []*inbound
	wake   chan struct{}
	handle func(w http.ResponseWriter, in *inbound)
}

func newScripted(t testing.TB, handle func(w http.ResponseWriter, in *inbound)) *scripted {
	s := &scripted{t: t, quit: make(chan struct{}), wake: make(chan struct{}, 1), handle: handle}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		close(s.quit)
		s.ts.Close()
	})
	return s
}

func (s *scripted) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	in := &inbound{At: time.Now(), Method: r.Method, URI: r.RequestURI, Header: r.Header.Clone(), Body: body, Ctx: r.Context(), Remote: r.RemoteAddr}
	if len(body) > 0 {
		if msg, err := jsonrpc.Decode(body); err == nil {
			in.Msg = msg
		}
	}
	s.mu.Lock()
	s.log = append(s.log, in)
	handle := s.handle
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	handle(w, in)
}

// setHandler replaces the script.
func (s *scripted) setHandler(handle func(w http.ResponseWriter, in *inbound)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handle = handle
}

func (s *scripted) requests() []*inbound {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*inbound(nil), s.log...)
}

// waitFor waits for a received request that satisfies match.
func (s *scripted) waitFor(what string, match func(*inbound) bool) *inbound {
	s.t.Helper()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		for _, in := range s.requests() {
			if match(in) {
				return in
			}
		}
		select {
		case <-s.wake:
		case <-time.After(10 * time.Millisecond):
		case <-deadline.C:
			s.t.Fatalf("no %s within %s; received:\n%s", what, wait, s.dump())
		}
	}
}

func (s *scripted) count(match func(*inbound) bool) int {
	n := 0
	for _, in := range s.requests() {
		if match(in) {
			n++
		}
	}
	return n
}

func (s *scripted) dump() string {
	var b strings.Builder
	for _, in := range s.requests() {
		fmt.Fprintf(&b, "  %s %s %s\n", in.Method, in.URI, in.Body)
	}
	return b.String()
}

// isRPC matches a POST of the JSON-RPC method.
func isRPC(method string) func(*inbound) bool {
	return func(in *inbound) bool { return in.Method == http.MethodPost && in.rpcMethod() == method }
}

// hold blocks a handler until its exchange ends or the test does.
func (s *scripted) hold(in *inbound) {
	select {
	case <-in.Ctx.Done():
	case <-s.quit:
	}
}

// replyJSON writes one JSON body.
func replyJSON(w http.ResponseWriter, status int, body string, header ...string) {
	for i := 0; i+1 < len(header); i += 2 {
		w.Header().Set(header[i], header[i+1])
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// result returns a JSON-RPC result for the request in.
func result(in *inbound, res string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, in.Msg.ID.Raw(), res)
}

// rpcError returns a JSON-RPC error for the request in (id null if in is nil).
func rpcError(in *inbound, code int, msg, data string) string {
	id := "null"
	if in != nil && in.Msg != nil {
		id = string(in.Msg.ID.Raw())
	}
	if data != "" {
		data = `,"data":` + data
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q%s}}`, id, code, msg, data)
}

// sseOpen starts an event stream.
func sseOpen(w http.ResponseWriter, header ...string) {
	for i := 0; i+1 < len(header); i += 2 {
		w.Header().Set(header[i], header[i+1])
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// sseSend writes raw event text and flushes it.
func sseSend(w http.ResponseWriter, text string) {
	io.WriteString(w, text)
	w.(http.Flusher).Flush()
}

// event returns a message event, with an id when set.
func event(id, data string) string {
	text := "data: " + strings.ReplaceAll(data, "\n", "\ndata: ") + "\n\n"
	if id != "" {
		return "id: " + id + "\n" + text
	}
	return text
}

// progress returns a progress notification for the request in.
func progress(in *inbound, n int) string {
	var p struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(in.Msg.Params, &p)
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":10}}`, p.Meta.Token, n)
}

// testLogger writes the pool's log to the test's.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// startPool runs a pool with one server until the test ends.
func startPool(t testing.TB, srv *config.Server, opts *Options) *Pool {
	t.Helper()
	if srv.Name == "" {
		srv.Name = "up"
	}
	if srv.Transport == "" {
		srv.Transport = config.TransportHTTP
	}
	if srv.StartupTimeout == 0 {
		srv.StartupTimeout = wait
	}
	if opts == nil {
		opts = &Options{}
	}
	opts.Logger = testLogger(t)
	if opts.ProbeTimeout == 0 {
		opts.ProbeTimeout = 2 * time.Second
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = time.Second
	}
	p := NewPool(&config.Config{Servers: map[string]*config.Server{srv.Name: srv}}, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(wait):
			t.Errorf("the pool did not stop within %s", wait)
		}
	})
	return p
}

// session returns the pool's live session of its only server.
func session(t testing.TB, p *Pool) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	s, err := p.Session(ctx, p.Names()[0])
	if err != nil {
		t.Fatalf("starting the session: %v", err)
	}
	return s
}

// call sends a request and waits for its answer.
func call(t testing.TB, s *Session, method, params string) (json.RawMessage, error) {
	t.Helper()
	obj, err := jsonrpc.ParseObject([]byte(params))
	if err != nil {
		t.Fatalf("params %s: %v", params, err)
	}
	r, err := s.Start(method, obj, nil, StartOptions{})
	if err != nil {
		return nil, err
	}
	select {
	case <-r.Done():
		return r.Result()
	case <-time.After(wait):
		t.Fatalf("no answer to %s within %s", method, wait)
		return nil, nil
	}
}

// legacyScript answers like a 2025-era Streamable HTTP server: a discover
// refused the way the TypeScript SDK v1 refuses it, initialize with a
// session, 202 for notifications and responses, 405 for GET, 200 for
// DELETE; other requests go to other.
func legacyScript(version, sessionID string, other func(w http.ResponseWriter, in *inbound)) func(http.ResponseWriter, *inbound) {
	return func(w http.ResponseWriter, in *inbound) {
		switch {
		case in.Method == http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case in.Method == http.MethodDelete:
			w.WriteHeader(http.StatusOK)
		case in.Msg == nil:
			w.WriteHeader(http.StatusBadRequest)
		case in.rpcMethod() == mcp.MethodInitialize:
			replyJSON(w, 200, result(in, `{"protocolVersion":"`+version+`","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}`),
				"Mcp-Session-Id", sessionID)
		case in.Header.Get("Mcp-Session-Id") == "":
			replyJSON(w, 400, rpcError(nil, -32000, "Bad Request: No valid session ID provided", ""))
		case !in.Msg.IsRequest():
			w.WriteHeader(http.StatusAccepted)
		default:
			other(w, in)
		}
	}
}

// modernScript answers like a 2026-07-28 server: server/discover, and other
// requests go to other; GET and DELETE get 405.
func modernScript(other func(w http.ResponseWriter, in *inbound)) func(http.ResponseWriter, *inbound) {
	return func(w http.ResponseWriter, in *inbound) {
		switch {
		case in.Method != http.MethodPost:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case in.Msg == nil:
			w.WriteHeader(http.StatusBadRequest)
		case !in.Msg.IsRequest():
			w.WriteHeader(http.StatusAccepted)
		case in.rpcMethod() == mcp.MethodDiscover:
			replyJSON(w, 200, result(in, `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"scripted-modern","version":"2"}}}`))
		default:
			other(w, in)
		}
	}
}

// startProgressing starts a tools/call of "slow" on s and returns it once
// its first progress has arrived.
func startProgressing(t *testing.T, s *Session) *Request {
	t.Helper()
	progressed := make(chan struct{}, 1)
	r, err := s.Start(mcp.MethodToolsCall, mustObject(`{"name":"slow"}`), nil, StartOptions{OnProgress: func(json.RawMessage) {
		select {
		case progressed <- struct{}{}:
		default:
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-progressed:
	case <-time.After(wait):
		t.Fatal("no progress")
	}
	return r
}
