package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/sse"
)

// Limits and timing of the HTTP mode.
const (
	httpPath          = "/mcp"
	maxBodyBytes      = 4 << 20 // a POST body; more is 413
	defaultKeepAlive  = 15 * time.Second
	retryDelay        = 100 * time.Millisecond // the retry field sent before -sse-close-after ends a connection
	shutdownGrace     = 5 * time.Second
	readHeaderTimeout = 10 * time.Second
)

// Reasons recorded for what a client did over HTTP.
const (
	// ReasonStreamClosed is the reason of the cancellation recorded when a
	// 2026-07-28 client closes a request's response stream (JSON or SSE)
	// before its response: the HTTP way to cancel in that revision.
	ReasonStreamClosed = "the client closed the request's stream"
	// ReasonSessionDeleted is the reason recorded for each request running
	// in a legacy session that the client ended with DELETE.
	ReasonSessionDeleted = "the client deleted the session"
)

var errStdinClosed = errors.New("demo server stopping: stdin closed")

// ServeHTTP runs the demo server over Streamable HTTP on one endpoint,
// /mcp, at Options.HTTP (127.0.0.1:0 when empty). Once it listens it writes
// exactly one line to stdout, "listening on http://ADDR/mcp". It returns
// nil when ctx is done or, if stdin is not nil, at the end of stdin, after
// ending every request and connection and waiting for all the goroutines
// it started; to interrupt a pending read of stdin it sets a read deadline
// on stdin if stdin supports one, else closes it if it is an [io.Closer].
// See [ServeListener] for what it serves.
func ServeHTTP(ctx context.Context, stdin io.Reader, stdout io.Writer, opts *Options) error {
	cfg, err := newConfig(opts)
	if err != nil {
		return err
	}
	addr := cfg.HTTP
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	h, err := newHTTPServer(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	if _, err := fmt.Fprintf(stdout, "listening on http://%s%s\n", ln.Addr(), httpPath); err != nil {
		ln.Close()
		h.close()
		return fmt.Errorf("demo: writing the address: %w", err)
	}
	if stdin == nil {
		return h.serve(ctx, ln)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	wg.Go(func() {
		io.Copy(io.Discard, stdin)
		cancel(errStdinClosed)
	})
	err = h.serve(ctx, ln)
	unblock(stdin)
	wg.Wait()
	return err
}

// ServeListener serves the demo server over Streamable HTTP on ln, which it
// closes, until ctx is done, as [ServeHTTP] does (without its address line
// and stdin).
//
// On the one endpoint, /mcp, every POST is classified per request (spec
// checklist §5.13): initialize, or an Mcp-Session-Id, is legacy
// (2025-03-26 … 2025-11-25: sessions, SSE responses with event ids,
// resumption by GET with Last-Event-ID, the standalone GET stream, DELETE);
// a request whose _meta carries a protocol version (or one with a 2026
// MCP-Protocol-Version header) is 2026-07-28 (stateless, its headers
// checked against its body). Options.Era "legacy" or "modern" serves only
// that era. A request is answered with SSE when it asked for progress (or,
// with Options.PingClient, for a legacy tools/call), else with JSON.
func ServeListener(ctx context.Context, ln net.Listener, opts *Options) error {
	cfg, err := newConfig(opts)
	if err != nil {
		ln.Close()
		return err
	}
	h, err := newHTTPServer(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	return h.serve(ctx, ln)
}

// httpServer is one ServeHTTP call's state.
type httpServer struct {
	cfg    *config
	log    *slog.Logger
	rec    *recorder
	wire   *wireLog        // nil without Options.WireLog
	modern *server         // serves the stateless (2026-07-28) requests
	ctx    context.Context // parent of every call and session; cancelled with errStopping when serving ends
	cancel context.CancelCauseFunc
	stop   chan struct{}  // closed when serving ends: connections and waits give up
	calls  sync.WaitGroup // the calls' goroutines
	active sync.WaitGroup // handlers running; added to under mu while !closed

	pingSeq atomic.Int64

	mu       sync.Mutex
	closed   bool                // guarded by mu: no new handlers
	sessions map[string]*session // guarded by mu: live legacy sessions by id
}

func newHTTPServer(cfg *config) (*httpServer, error) {
	rec, err := openRecorder(cfg)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	wire, err := openWireLog(cfg.WireLog)
	if err != nil {
		rec.close()
		return nil, fmt.Errorf("demo: %w", err)
	}
	h := &httpServer{cfg: cfg, log: cfg.Logger, rec: rec, wire: wire, stop: make(chan struct{}), sessions: map[string]*session{}}
	h.ctx, h.cancel = context.WithCancelCause(context.Background())
	h.modern = h.newServer(cfg, "")
	return h, nil
}

// newServer returns a request handler sharing h's record and wire log.
func (h *httpServer) newServer(cfg *config, session string) *server {
	return &server{cfg: cfg, log: h.log, rec: h.rec, wire: h.wire, calls: map[string]*call{}, tools: cfg.toolsOf(httpTools), session: session, stopping: h.ctx.Done()}
}

func (h *httpServer) close() {
	h.cancel(nil)
	h.rec.close()
	h.wire.close()
}

// serve serves ln until ctx is done, then ends every call and connection.
func (h *httpServer) serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelDebug),
	}
	h.log.Info("serving over HTTP", "url", "http://"+ln.Addr().String()+httpPath, "era", h.cfg.Era, "versions", h.cfg.supported)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
		errc = nil
	}
	h.shutdown()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	if srv.Shutdown(sctx) != nil {
		srv.Close()
	}
	cancel()
	if errc != nil {
		err = <-errc
	}
	h.active.Wait()
	h.calls.Wait()
	h.close()
	h.log.Info("stopped")
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// shutdown refuses new requests, cancels every call (errStopping) and
// ends every session.
func (h *httpServer) shutdown() {
	h.mu.Lock()
	h.closed = true
	sessions := make([]*session, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	close(h.stop)
	h.cancel(errStopping)
	for _, s := range sessions {
		h.endSession(s, "the server stopped", false)
	}
}

// enter counts a handler in, unless serving has ended.
func (h *httpServer) enter() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.active.Add(1)
	return true
}

// exchange is one HTTP request being handled.
type exchange struct {
	w       http.ResponseWriter
	r       *http.Request
	hdr     map[string]string // recordedHeaders(r)
	msg     *jsonrpc.Message  // the POSTed message, once decoded
	session string            // the legacy session it names, if any
}

func (h *httpServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.enter() {
		http.Error(w, "the demo server is stopping", http.StatusServiceUnavailable)
		return
	}
	defer h.active.Done()
	h.wire.lines(wireHeaders(r))
	x := &exchange{w: w, r: r, hdr: recordedHeaders(r)}
	switch {
	case r.URL.Path != httpPath:
		h.reject(x, http.StatusNotFound, invalidRequest("no MCP endpoint at %s: it is %s", r.URL.Path, httpPath))
	case !originAllowed(r.Header.Get("Origin")):
		h.reject(x, http.StatusForbidden, invalidRequest("Origin %q is not allowed", r.Header.Get("Origin")))
	case r.Method == http.MethodPost:
		h.post(x)
	case r.Method == http.MethodGet:
		h.get(x)
	case r.Method == http.MethodDelete:
		h.del(x)
	default:
		h.notAllowed(x, "GET, POST, DELETE", "method %s is not allowed", r.Method)
	}
}

func invalidRequest(format string, args ...any) *jsonrpc.Error {
	return jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, format, args...)
}

// reject answers with an HTTP error status and a JSON-RPC error (with the
// request's id when it has one), and records it.
func (h *httpServer) reject(x *exchange, status int, e *jsonrpc.Error) {
	ev := Event{Event: EventRejected, Status: status, Code: e.Code, Reason: e.Message, Session: x.session, Headers: x.hdr}
	var id jsonrpc.ID
	if x.msg != nil {
		ev.Method = x.msg.Method
		if x.msg.ID.IsValid() && !x.msg.ID.IsNull() {
			id, ev.ID = x.msg.ID, x.msg.ID.Raw()
		}
	}
	h.rec.add(ev)
	h.log.Info("rejected", "http", x.r.Method, "status", status, "code", e.Code, "reason", e.Message)
	h.writeJSON(x.w, status, jsonrpc.NewError(id, e).Encode())
}

// notAllowed answers 405 naming the allowed methods.
func (h *httpServer) notAllowed(x *exchange, allow, format string, args ...any) {
	x.w.Header().Set("Allow", allow)
	h.reject(x, http.StatusMethodNotAllowed, invalidRequest(format, args...))
}

func (h *httpServer) writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	h.wire.line("> ", body)
	w.Write(body)
}

// accepted answers a notification or response: 202, no body.
func accepted(w http.ResponseWriter) { w.WriteHeader(http.StatusAccepted) }

func sseHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
}

// originAllowed reports whether an Origin header is absent or names a
// loopback host (DNS-rebinding protection; the spec asks for 403 otherwise).
func originAllowed(origin string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	return strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()
}

// accepts reports whether the Accept header lists media type typ.
func accepts(r *http.Request, typ string) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), typ) {
				return true
			}
		}
	}
	return false
}

// post handles a POSTed message.
func (h *httpServer) post(x *exchange) {
	r := x.r
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		h.reject(x, http.StatusUnsupportedMediaType, invalidRequest("Content-Type must be application/json, not %q", r.Header.Get("Content-Type")))
		return
	}
	if !accepts(r, "application/json") || !accepts(r, "text/event-stream") {
		h.reject(x, http.StatusNotAcceptable, invalidRequest("Accept must list both application/json and text/event-stream, not %q", r.Header.Get("Accept")))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(x.w, r.Body, maxBodyBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		h.reject(x, http.StatusRequestEntityTooLarge, invalidRequest("body exceeds %d bytes", tooBig.Limit))
		return
	case err != nil:
		h.log.Debug("reading a POST body", "err", err)
		return
	}
	h.wire.line("< ", oneLine(body))
	m, err := jsonrpc.Decode(body)
	var bad *jsonrpc.Error
	switch {
	case errors.Is(err, jsonrpc.ErrBatch):
		h.reject(x, http.StatusBadRequest, invalidRequest("invalid request: batches are not supported"))
		return
	case errors.As(err, &bad):
		x.msg = m
		h.reject(x, http.StatusBadRequest, bad)
		return
	}
	x.msg = m
	sid := r.Header.Get(hdrSessionID)
	if h.cfg.Era != EraModern {
		switch {
		case m.IsRequest() && m.Method == mcp.MethodInitialize:
			if sid != "" {
				x.session = sid
				h.reject(x, http.StatusBadRequest, invalidRequest("initialize starts a new session: send it without %s", hdrSessionID))
				return
			}
			h.initialize(x)
			return
		case sid != "":
			x.session = sid
			if sess := h.session(sid); sess != nil {
				h.legacyPost(x, sess)
			} else {
				h.reject(x, http.StatusNotFound, invalidRequest("session %q not found: it ended, or never was; initialize again", sid))
			}
			return
		}
	}
	modern := h.cfg.Era == EraModern || h.cfg.Era == EraAuto && modernMarked(r, m)
	if m.IsNotification() && m.Method == mcp.MethodCancelled {
		// No client sends this over 2026-07-28 HTTP (closing the stream
		// cancels); mcpx must never: record it where tests look.
		var p mcp.CancelledParams
		json.Unmarshal(m.Params, &p)
		h.rec.add(Event{Event: EventCancelledHTTP, RequestID: p.RequestID, Reason: p.Reason, Headers: x.hdr})
		h.log.Warn("notifications/cancelled POSTed outside a legacy session", "requestId", string(p.RequestID))
		if modern {
			accepted(x.w)
			return
		}
	}
	if !modern {
		h.reject(x, http.StatusBadRequest, invalidRequest("missing %s header: initialize first", hdrSessionID))
		return
	}
	h.modernPost(x)
}

// modernMarked reports whether a session-less message is a 2026-07-28 one:
// its params._meta names a protocol version, or its MCP-Protocol-Version
// header is 2026-07-28 or later.
func modernMarked(r *http.Request, m *jsonrpc.Message) bool {
	if v := r.Header.Get(hdrProtocolVersion); v != "" && mcp.IsModern(v) {
		return true
	}
	params, err := jsonrpc.ParseObject(m.Params)
	if err != nil {
		return false
	}
	_, ok := mcp.Meta(params).Get(mcp.MetaProtocolVersion)
	return ok
}

// modernMethods are the methods served to 2026-07-28 requests; with
// -surface also surfaceMethods.
var modernMethods = map[string]bool{mcp.MethodDiscover: true, mcp.MethodToolsList: true, mcp.MethodToolsCall: true}

var surfaceMethods = map[string]bool{"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true, mcp.MethodSubscriptionsListen: true}

// modernPost handles a 2026-07-28 message: one request, checked whole
// before it runs (statuses per streamable-http.mdx "Request Metadata").
func (h *httpServer) modernPost(x *exchange) {
	m := x.msg
	switch {
	case m.IsResponse():
		h.reject(x, http.StatusBadRequest, invalidRequest("a 2026-07-28 client sends no JSON-RPC responses"))
		return
	case m.IsNotification():
		accepted(x.w) // none is defined over 2026-07-28 HTTP: ignored
		return
	}
	req := parseRequest(m)
	if m.Method == mcp.MethodInitialize {
		// Only in the modern era: refused by initialize itself, naming
		// the versions, with 400.
		h.run(x, h.modern, nil, req, h.newStream("", false, m.ID), http.StatusBadRequest)
		return
	}
	if req.err != nil {
		h.reject(x, http.StatusBadRequest, req.err)
		return
	}
	version, ok := mcp.MetaString(req.obj, mcp.MetaProtocolVersion)
	if !ok {
		h.reject(x, http.StatusBadRequest, invalidParams("missing _meta %q", mcp.MetaProtocolVersion))
		return
	}
	if e := checkModernHeaders(x.r, req, version); e != nil {
		h.reject(x, http.StatusBadRequest, e)
		return
	}
	if _, err := h.modern.classify(req); err != nil {
		var e *jsonrpc.Error
		if !errors.As(err, &e) {
			e = invalidParams("%v", err)
		}
		h.reject(x, http.StatusBadRequest, e)
		return
	}
	if !modernMethods[m.Method] && !(h.cfg.Surface && surfaceMethods[m.Method]) {
		h.reject(x, http.StatusNotFound, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method not found: %s", m.Method))
		return
	}
	if params := headerParamsOf[req.name]; m.Method == mcp.MethodToolsCall && len(params) > 0 {
		var p struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		json.Unmarshal(m.Params, &p)
		if e := checkParamHeaders(x.r, params, p.Arguments); e != nil {
			h.reject(x, http.StatusBadRequest, e)
			return
		}
	}
	sse := req.token != nil || m.Method == mcp.MethodSubscriptionsListen // a listen is all notifications
	h.run(x, h.modern, nil, req, h.newStream("", sse, m.ID), 0)
}

// run starts a request on s (in session sess, nil for a 2026-07-28 one)
// and answers it on st. errStatus, if not 0, is the status of a JSON error
// response.
func (h *httpServer) run(x *exchange, s *server, sess *session, req *request, st *stream, errStatus int) {
	conn := 0
	if st.sse {
		// Before the call starts, so that its first events wait for this
		// connection rather than find nobody to write them.
		conn, _ = st.attach(0)
		defer st.detach(conn)
	}
	c, ok := h.start(x, s, sess, req, st)
	if !ok {
		if sess != nil {
			sess.dropStream(st)
		}
		h.reject(x, http.StatusBadRequest, invalidRequest("invalid request: id %s is in use by a running request", req.msg.ID))
		return
	}
	h.answer(x, s, sess, c, st, conn, errStatus, req.msg.Method == mcp.MethodDiscover && h.cfg.IgnoreDiscover)
}

// start registers a request (in a session) and runs it on its own goroutine,
// which owns its stream's end.
func (h *httpServer) start(x *exchange, s *server, sess *session, req *request, st *stream) (*call, bool) {
	m := req.msg
	c := &call{id: m.ID, method: m.Method, tool: req.name, token: req.token, start: time.Now(), out: st, hdr: x.hdr}
	c.stubborn = m.Method == mcp.MethodInitialize || m.Method == mcp.MethodToolsCall && req.name == "stubborn"
	s.log.Debug("request", "id", m.ID.String(), "method", m.Method, "tool", req.name, "session", s.session, "sse", st.sse)
	parent := h.ctx
	if sess != nil {
		parent = sess.ctx
	}
	rctx := parent
	if !c.stubborn {
		rctx, c.cancel = context.WithCancelCause(parent)
	}
	// Registered once complete, and before its request event is recorded:
	// whoever saw the event may DELETE the session at once, and the DELETE
	// must find the call to cancel. Both under c.mu, so that a cancellation
	// (recorded under c.mu too) follows the request in the record.
	c.mu.Lock()
	registered := sess == nil || s.register(c)
	s.record(Event{Event: EventRequest, ID: m.ID.Raw(), Method: m.Method, Tool: req.name, ProgressToken: req.token, Meta: req.meta, Headers: x.hdr})
	c.mu.Unlock()
	if !registered {
		if c.cancel != nil {
			c.cancel(nil)
		}
		return nil, false
	}
	ping := sess != nil && h.cfg.PingClient && m.Method == mcp.MethodToolsCall && req.err == nil
	h.calls.Go(func() {
		if c.cancel != nil {
			defer c.cancel(nil)
		}
		if ping {
			if err := h.pingClient(rctx, sess, c); err != nil {
				req.err = err
			}
		}
		s.run(rctx, c, req)
		st.finish()
		if sess != nil {
			sess.streamDone(st)
		}
	})
	return c, true
}

// answer writes a request's answer: its stream as SSE (as connection conn
// of the stream), or its response as JSON. A call that ends without a response (cancelled, stopped, crashed)
// ends an SSE stream early and aborts a JSON answer; an ignored
// server/discover hangs until the client gives up. A 2026-07-28 client
// that goes away before the response has cancelled the request.
func (h *httpServer) answer(x *exchange, s *server, sess *session, c *call, st *stream, conn, errStatus int, hang bool) {
	w, r := x.w, x.r
	end := endComplete
	if st.sse {
		sseHeaders(w)
		w.WriteHeader(http.StatusOK)
		if sess != nil && st.id != "" && sess.priming() {
			sse.WriteEvent(w, st.eventID(0), "", nil) // primes the client's Last-Event-ID
		}
		http.NewResponseController(w).Flush()
		closeAfter := 0
		if sess != nil {
			closeAfter = h.cfg.SSECloseAfter
		}
		var last int
		end, last = st.pump(w, r, conn, 0, closeAfter)
		if end == endClosed {
			h.closeEarly(x, st, last)
			return
		}
	} else {
		var resp *sseEvent
		end, resp = st.awaitJSON(r)
		if resp != nil {
			status := http.StatusOK
			if resp.isError && errStatus != 0 {
				status = errStatus
			}
			h.writeJSON(w, status, resp.data)
			return
		}
	}
	switch {
	case end == endClientGone && sess == nil:
		st.abandon()
		s.cancelCall(c, Event{Event: EventCancelled, RequestID: c.id.Raw(), Reason: ReasonStreamClosed, Known: new(false)})
		return
	case end == endClientGone:
		h.log.Info("the client left a legacy request's stream: the request runs on", "id", c.id.String(), "session", sess.id)
		return
	case end == endComplete && hang:
		select {
		case <-r.Context().Done():
		case <-h.stop:
		}
	}
	if !st.sse {
		panic(http.ErrAbortHandler) // no response to send: close the connection
	}
}

// closeEarly ends a connection of an unfinished stream (-sse-close-after):
// it sends the last event id again with a retry delay, so that the client
// resumes with GET and Last-Event-ID.
func (h *httpServer) closeEarly(x *exchange, st *stream, last int) {
	sse.WriteRetry(x.w, st.eventID(last), retryDelay)
	http.NewResponseController(x.w).Flush()
	h.rec.add(Event{Event: EventStreamClosed, Session: x.session, ID: st.callID.Raw(), LastEventID: st.eventID(last)})
	h.log.Debug("closed a stream's connection early", "id", st.callID.String(), "lastEventId", st.eventID(last))
}

// oneLine returns a body as one wire log line: compacted if it is JSON.
func oneLine(body []byte) []byte {
	if bytes.IndexByte(body, '\n') < 0 && bytes.IndexByte(body, '\r') < 0 {
		return body
	}
	var b bytes.Buffer
	if json.Compact(&b, body) == nil {
		return b.Bytes()
	}
	return []byte(strings.NewReplacer("\r", " ", "\n", " ").Replace(string(body)))
}

// lines logs several prefixed lines together.
func (l *wireLog) lines(lines []string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = l.buf[:0]
	for _, line := range lines {
		l.buf = append(append(l.buf, line...), '\n')
	}
	l.f.Write(l.buf)
}
