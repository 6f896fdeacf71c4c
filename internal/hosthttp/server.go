package hosthttp

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/principal"
	"mcpx/internal/sock"
)

// Options configure a [Server]; nil means defaults.
type Options struct {
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
	// Logger: nil discards.
	Logger *slog.Logger
}

// Server serves MCP over Streamable HTTP, every revision on one endpoint
// (docs/protocol-notes.md §6.3): initialize-based sessions (Mcp-Session-Id) and
// stateless 2026-07-28 requests side by side. A legacy session is a host
// session whose requests arrive as POSTs; a 2026-07-28 request is a host
// session of its own. Either way each request's messages go to its own
// response stream, and the host sessions behind it ([Sessions]) are
// those of a stream connection.
//
// What a disconnect means depends on the era: a 2026-07-28 host closing a
// request's stream cancels the request (the spec's cancellation signal); a
// legacy host that merely disconnects has not cancelled (its spec says so),
// so its call runs on and a result that finds no stream is logged, kept for
// the host; a legacy host cancels with a notifications/cancelled POST.
//
// A legacy session may open one standalone GET stream (standalone.go),
// which carries what mcpx tells the session outside any request: list
// changes, resource updates, log messages. What an upstream asks during a
// call goes on that call's own stream. 2026-07-28 has no standalone
// stream (GET answers 405 there).
// JSON-RPC batches are refused, in every revision (see post).
//
// A Server is safe for concurrent use. [Server.Close] ends it.
type Server struct {
	srv  Sessions // the host sessions it carries messages for
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	sessions map[string]*httpSession // legacy sessions by Mcp-Session-Id
	live     map[Session]struct{}    // every session and 2026 request
	closed   bool

	cleanup sync.WaitGroup // what ended sessions leave behind (endSession); Close waits
}

// New returns the Streamable HTTP face of sessions. Serve it through
// [Server.Handler], once per listener.
func New(sessions Sessions, opts *Options) *Server {
	h := &Server{
		srv:      sessions,
		sessions: map[string]*httpSession{},
		live:     map[Session]struct{}{},
	}
	if opts != nil {
		h.opts = *opts
	}
	h.log = h.opts.Logger
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
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
	return h
}

// Close ends every session and request: calls in flight end with "mcpx is
// stopping" (the hosts still reading are told so), and later requests get
// 503. It returns once every handler goroutine it knows of has ended; the
// HTTP servers' own Shutdown then waits for the response streams.
func (h *Server) Close() {
	h.mu.Lock()
	h.closed = true
	live := make([]Session, 0, len(h.live))
	for hs := range h.live {
		live = append(live, hs)
	}
	var streams []*Stream
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
		hs.End(EndStopping)
	}
	for _, hs := range live {
		hs.Close()
	}
	// No session has a request in flight now: a 2026-07-28 request's
	// session is new (refused now) or live (closed, waited for above),
	// or forgotten once its request ended.
	h.srv.Close()
	h.cleanup.Wait()
}

// Sessions returns how many legacy sessions are open.
func (h *Server) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// Live returns every session the face serves now: the legacy sessions,
// and each 2026-07-28 request's.
func (h *Server) Live() []Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Session, 0, len(h.live))
	for hs := range h.live {
		out = append(out, hs)
	}
	return out
}

// newHostSession returns a host session for the HTTP requests of
// principal, registered as live; nil once the face is closed.
func (h *Server) newHostSession(who principal.Principal, stateless bool) Session {
	hs := h.srv.New(who, stateless)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.live[hs] = struct{}{}
	return hs
}

func (h *Server) forget(hs Session) {
	h.mu.Lock()
	delete(h.live, hs)
	h.mu.Unlock()
}

// Handler returns the MCP endpoint for one listener: a's checks, then the
// protocol. Mount it at /mcp.
func (h *Server) Handler(a Access) http.Handler {
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
			h.srv.Refused(r.Context(), level, strconv.Itoa(status)+msg, "http request refused", "status", status, "remote", r.RemoteAddr, "why", msg)
			if v.Challenge != "" {
				w.Header().Set("WWW-Authenticate", v.Challenge)
			}
			CloseUnread(w, r)
			Error(w, status, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "%s", msg))
			return
		}
		sock.Trust(r.Context())
		h.serve(w, r, who) // who travels as an argument, then on the session
	})
}

// Who an HTTP request comes from is decided once, by the listener's
// [Access]; the requestState mcpx seals and a legacy session are
// bound to it; it travels with the request to its host session, whose
// policy decides what it may do.

// serve routes one request that passed its listener's checks.
func (h *Server) serve(w http.ResponseWriter, r *http.Request, who principal.Principal) {
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, who)
	case http.MethodDelete:
		h.delete(w, r, who)
	case http.MethodGet:
		h.get(w, r, who)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		Error(w, http.StatusMethodNotAllowed, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"method %s not allowed: use POST (GET for a legacy session's stream, DELETE to end it)", r.Method))
	}
}

// post serves one JSON-RPC message. Batches are refused in every
// revision: 2025-03-26 allowed them, but no SDK sends them, 2025-06-18
// removed them, and mcpx's stdio face refuses them too.
func (h *Server) post(w http.ResponseWriter, r *http.Request, who principal.Principal) {
	if !IsJSONType(r.Header.Get("Content-Type")) {
		Error(w, http.StatusUnsupportedMediaType, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"unsupported Content-Type %s: send one JSON-RPC message as application/json", Quote(r.Header.Get("Content-Type"))))
		return
	}
	acc := ParseAccept(r.Header.Values("Accept"))
	if !acc.JSON && !acc.SSE {
		Error(w, http.StatusNotAcceptable, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"not acceptable: Accept must allow application/json and text/event-stream"))
		return
	}
	if limit := int64(h.srv.MaxMessageBytes()); r.ContentLength > limit {
		CloseUnread(w, r) // refused by its length, unread
		Error(w, http.StatusRequestEntityTooLarge, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"invalid request: message of %d bytes exceeds the limit of %d bytes", r.ContentLength, limit))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(h.srv.MaxMessageBytes())))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			Error(w, http.StatusRequestEntityTooLarge, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
				"invalid request: message exceeds the limit of %d bytes", tooBig.Limit))
			return
		}
		Error(w, http.StatusBadRequest, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeParseError, "parse error: reading the body: %v", err))
		return
	}
	msg, err := jsonrpc.Decode(body)
	if errors.Is(err, jsonrpc.ErrBatch) {
		Error(w, http.StatusBadRequest, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
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
		Error(w, http.StatusBadRequest, id, rpcErr)
		return
	}
	h.dispatch(w, r, who, msg, acc)
}

// delete ends a legacy session.
func (h *Server) delete(w http.ResponseWriter, r *http.Request, who principal.Principal) {
	sid := r.Header.Get(HeaderSessionID)
	if sid == "" {
		Error(w, http.StatusBadRequest, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "bad request: DELETE needs the Mcp-Session-Id header"))
		return
	}
	sess := h.session(who, sid)
	if sess == nil {
		Error(w, http.StatusNotFound, jsonrpc.NullID, errNoSession())
		return
	}
	h.endSession(sess, EndDeleted)
	w.WriteHeader(http.StatusNoContent)
}

func errNoSession() *jsonrpc.Error {
	return jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "session not found: it ended or never existed; send initialize for a new one")
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
