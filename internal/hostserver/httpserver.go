package hostserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"mcpx/internal/hosthttp"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
	"mcpx/internal/sock"
)

// HTTPOptions configure [Server.HTTP]; nil means defaults.
type HTTPOptions struct {
	// SessionIdle ends a legacy session that has had no request in flight
	// for this long (checked whenever a session starts). Default 1h.
	SessionIdle time.Duration
	// MaxSessions bounds the legacy sessions kept at once: past it, a new
	// one ends the session with nothing in flight unused for the longest
	// (or, when every one has something in flight, is refused). Default
	// 1000.
	MaxSessions int
	// KeepAlive is how often a quiet SSE response stream gets a comment
	// line, so that proxies and clients do not time it out. Default 15s.
	KeepAlive time.Duration
}

// HTTP serves MCP over Streamable HTTP, every revision on one endpoint
// (docs/protocol-notes.md §6.3): initialize-based sessions (Mcp-Session-Id) and
// stateless 2026-07-28 requests side by side. A legacy session is a host
// session whose requests arrive as POSTs; a 2026-07-28 request is a host
// session of its own. Either way each request's messages go to its own
// response stream, and the relay core is the stdio one.
//
// What a disconnect means depends on the era: a 2026-07-28 host closing a
// request's stream cancels the request (the spec's cancellation signal); a
// legacy host that merely disconnects has not cancelled (its spec says so),
// so its call runs on and a result that finds no stream is logged, kept for
// the host; a legacy host cancels with a notifications/cancelled POST.
//
// A legacy session may open one standalone GET stream (httpstream.go),
// which carries what mcpx tells the session outside any request: list
// changes, resource updates, log messages. What an upstream asks during a
// call goes on that call's own stream. 2026-07-28 has no standalone
// stream (GET answers 405 there).
// JSON-RPC batches are refused, in every revision (see post).
//
// An HTTP is safe for concurrent use. [HTTP.Close] ends it.
type HTTP struct {
	srv  *Server
	opts HTTPOptions
	log  *slog.Logger

	mu       sync.Mutex
	sessions map[string]*httpSession   // legacy sessions by Mcp-Session-Id
	live     map[*hostSession]struct{} // every session and 2026 request
	closed   bool

	cleanup sync.WaitGroup // what ended sessions leave behind (endSession); Close waits
	workers *workers       // the handler goroutines of 2026-07-28 requests
}

// HTTP returns the Streamable HTTP face of s. Serve it through
// [HTTP.Handler], once per listener.
func (s *Server) HTTP(opts *HTTPOptions) *HTTP {
	h := &HTTP{
		srv:      s,
		log:      s.log,
		sessions: map[string]*httpSession{},
		live:     map[*hostSession]struct{}{},
		workers:  newWorkers(),
	}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.SessionIdle <= 0 {
		h.opts.SessionIdle = time.Hour
	}
	if h.opts.MaxSessions <= 0 {
		h.opts.MaxSessions = 1000
	}
	if h.opts.KeepAlive <= 0 {
		h.opts.KeepAlive = 15 * time.Second
	}
	s.hostsMu.Lock()
	s.faces = append(s.faces, h)
	s.hostsMu.Unlock()
	return h
}

// Close ends every session and request: calls in flight end with "mcpx is
// stopping" (the hosts still reading are told so), and later requests get
// 503. It returns once every handler goroutine it knows of has ended; the
// HTTP servers' own Shutdown then waits for the response streams.
func (h *HTTP) Close() {
	h.mu.Lock()
	h.closed = true
	live := make([]*hostSession, 0, len(h.live))
	for hs := range h.live {
		live = append(live, hs)
	}
	var streams []*httpSink
	for _, sess := range h.sessions {
		if sess.stream != nil {
			streams = append(streams, sess.stream)
		}
	}
	clear(h.sessions)
	h.mu.Unlock()
	for _, s := range streams {
		s.finish()
	}
	for _, hs := range live {
		hs.setClosing()
		h.srv.relay.Registry().CancelSession(hs.id, &relay.Cause{Kind: relay.Stopping})
	}
	for _, hs := range live {
		hs.handlers.Wait()
	}
	// No session can hand the workers a request now: a 2026-07-28
	// request's session is new (refused now) or live (closing, waited
	// for above), or forgotten once its request ended.
	h.workers.close()
	h.cleanup.Wait()
}

// Sessions returns how many legacy sessions are open.
func (h *HTTP) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// newHostSession returns a host session for the HTTP requests of
// principal, registered as live; nil once the face is closed.
func (h *HTTP) newHostSession(who principal.Principal) *hostSession {
	hs := &hostSession{
		srv:  h.srv,
		id:   "http-" + strconv.FormatUint(h.srv.nextID.Add(1), 10),
		base: context.Background(), // HTTP.Close ends its requests, through the registry
		who:  who,
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.live[hs] = struct{}{}
	return hs
}

func (h *HTTP) forget(hs *hostSession) {
	h.mu.Lock()
	delete(h.live, hs)
	h.mu.Unlock()
}

// Handler returns the MCP endpoint for one listener: a's checks, then the
// protocol. Mount it at /mcp.
func (h *HTTP) Handler(a hosthttp.Access) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := a.Decide(r)
		status, msg, who := v.Status, v.Msg, v.Who
		if status != 0 {
			// Never the token: only whether one was sent.
			level := slog.LevelDebug
			if status == http.StatusUnauthorized && r.Header.Get("Authorization") != "" {
				level = slog.LevelInfo // a wrong or revoked token: someone should know
			}
			// One line per kind of refusal a window: a client sending
			// wrong tokens cannot flood the log.
			h.srv.refused.Log(r.Context(), level, strconv.Itoa(status)+msg, "http request refused", "status", status, "remote", r.RemoteAddr, "why", msg)
			if v.Challenge != "" {
				w.Header().Set("WWW-Authenticate", v.Challenge)
			}
			hosthttp.CloseUnread(w, r)
			hosthttp.Error(w, status, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "%s", msg))
			return
		}
		sock.Trust(r.Context())
		h.serve(w, r, who) // who travels as an argument, then on the session
	})
}

// Who an HTTP request comes from is decided once, by the listener's
// [hosthttp.Access]; the requestState mcpx seals and a legacy session are
// bound to it; it travels with the request to its host session, whose
// policy decides what it may do.

// serve routes one request that passed its listener's checks.
func (h *HTTP) serve(w http.ResponseWriter, r *http.Request, who principal.Principal) {
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, who)
	case http.MethodDelete:
		h.delete(w, r, who)
	case http.MethodGet:
		h.get(w, r, who)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		hosthttp.Error(w, http.StatusMethodNotAllowed, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"method %s not allowed: use POST (GET for a legacy session's stream, DELETE to end it)", r.Method))
	}
}

// post serves one JSON-RPC message. Batches are refused in every
// revision: 2025-03-26 allowed them, but no SDK sends them, 2025-06-18
// removed them, and mcpx's stdio face refuses them too.
func (h *HTTP) post(w http.ResponseWriter, r *http.Request, who principal.Principal) {
	if !hosthttp.IsJSONType(r.Header.Get("Content-Type")) {
		hosthttp.Error(w, http.StatusUnsupportedMediaType, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"unsupported Content-Type %s: send one JSON-RPC message as application/json", quote(r.Header.Get("Content-Type"))))
		return
	}
	acc := hosthttp.ParseAccept(r.Header.Values("Accept"))
	if !acc.JSON && !acc.SSE {
		hosthttp.Error(w, http.StatusNotAcceptable, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"not acceptable: Accept must allow application/json and text/event-stream"))
		return
	}
	if limit := int64(h.srv.maxMessageBytes()); r.ContentLength > limit {
		hosthttp.CloseUnread(w, r) // refused by its length, unread
		hosthttp.Error(w, http.StatusRequestEntityTooLarge, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"invalid request: message of %d bytes exceeds the limit of %d bytes", r.ContentLength, limit))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(h.srv.maxMessageBytes())))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			hosthttp.Error(w, http.StatusRequestEntityTooLarge, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
				"invalid request: message exceeds the limit of %d bytes", tooBig.Limit))
			return
		}
		hosthttp.Error(w, http.StatusBadRequest, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeParseError, "parse error: reading the body: %v", err))
		return
	}
	msg, err := jsonrpc.Decode(body)
	if errors.Is(err, jsonrpc.ErrBatch) {
		hosthttp.Error(w, http.StatusBadRequest, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"invalid request: JSON-RPC batches are not supported; send one message per POST"))
		return
	}
	if err != nil {
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) {
			rpcErr = jsonrpc.Errorf(jsonrpc.CodeParseError, "parse error: %v", err)
		}
		id := jsonrpc.NullID
		if msg != nil && msg.ID.IsValid() {
			id = msg.ID
		}
		hosthttp.Error(w, http.StatusBadRequest, id, rpcErr)
		return
	}
	h.dispatch(w, r, who, msg, acc)
}

// delete ends a legacy session.
func (h *HTTP) delete(w http.ResponseWriter, r *http.Request, who principal.Principal) {
	sid := r.Header.Get(hosthttp.HeaderSessionID)
	if sid == "" {
		hosthttp.Error(w, http.StatusBadRequest, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "bad request: DELETE needs the Mcp-Session-Id header"))
		return
	}
	sess := h.session(who, sid)
	if sess == nil {
		hosthttp.Error(w, http.StatusNotFound, jsonrpc.NullID, errNoSession())
		return
	}
	h.endSession(sess, &relay.Cause{Kind: relay.HostCancelled, Detail: "it ended its session (HTTP DELETE)"})
	w.WriteHeader(http.StatusNoContent)
}

// quote is how a refusal names a value (hosthttp.Quote).
func quote(s string) string { return hosthttp.Quote(s) }

func errNoSession() *jsonrpc.Error {
	return jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "session not found: it ended or never existed; send initialize for a new one")
}

func (s *Server) maxMessageBytes() int {
	if s.opts.MaxMessageBytes > 0 {
		return s.opts.MaxMessageBytes
	}
	return 16 << 20
}

// metaOf returns a request's params._meta, empty if absent.
func metaOf(msg *jsonrpc.Message) *jsonrpc.Object {
	params, err := jsonrpc.ParseObject(msg.Params)
	if err != nil {
		return &jsonrpc.Object{}
	}
	return mcp.Meta(params)
}

// reqParams is a request's params as the HTTP face reads them, parsed
// once for every check and the response stream's choices.
type reqParams struct {
	obj  *jsonrpc.Object // nil when params is not an object
	meta *jsonrpc.Object // params._meta; empty when absent
	// name is params.name when it is a string (a tools/call's tool, read
	// by every check).
	name    string
	hasName bool
}

func parseParams(msg *jsonrpc.Message) reqParams {
	obj, err := jsonrpc.ParseObject(msg.Params)
	if err != nil {
		return reqParams{meta: &jsonrpc.Object{}}
	}
	p := reqParams{obj: obj, meta: mcp.Meta(obj)}
	if raw, ok := obj.Get("name"); ok {
		p.name, p.hasName = jsonrpc.Unquote(raw)
	}
	return p
}

// get returns a member of params.
func (p reqParams) get(key string) (json.RawMessage, bool) {
	if p.obj == nil {
		return nil, false
	}
	return p.obj.Get(key)
}

// str returns a string member of params.
func (p reqParams) str(key string) (string, bool) {
	if key == "name" {
		return p.name, p.hasName
	}
	raw, ok := p.get(key)
	if !ok {
		return "", false
	}
	return jsonrpc.Unquote(raw) // null is not a string
}
