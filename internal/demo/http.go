package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mcpx/internal/jsonrpc"
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
	if cfg.Tasks {
		return errors.New("demo: -tasks is served over stdio only")
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
	return &server{cfg: cfg, log: h.log, rec: h.rec, wire: h.wire, calls: map[string]*call{}, tools: cfg.toolsOf(httpTools()), session: session, stopping: h.ctx.Done()}
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
