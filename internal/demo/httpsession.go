package demo

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/sse"
)

// Bounds of legacy sessions.
const (
	maxSessions     = 1024             // beyond it initialize evicts the oldest idle session, or gets 503
	finishedStreams = 32               // finished SSE streams a session keeps for late resumption
	pingTimeout     = 30 * time.Second // how long -ping-client waits for the client's answer
)

var (
	errSessionEnded    = errors.New("the session ended")
	errTooManySessions = fmt.Errorf("too many sessions (%d), none idle", maxSessions)
)

// session is a legacy Streamable HTTP session, minted by initialize.
type session struct {
	id      string
	srv     *server // the session's requests, by id; legacy era
	ctx     context.Context
	cancel  context.CancelCauseFunc
	created time.Time

	mu       sync.Mutex
	version  string                           // guarded by mu; negotiated by initialize ("" until answered)
	streams  map[string]*stream               // guarded by mu; resumable SSE streams by id
	finished []string                         // guarded by mu; ids of finished streams in streams, oldest first
	next     int                              // guarded by mu; the last stream id handed out
	pings    map[string]chan *jsonrpc.Message // guarded by mu; pings awaiting the client's answer, by raw id
	get      bool                             // guarded by mu; a standalone GET stream is open
}

// newSession mints a session, evicting the oldest idle one if there are
// too many.
func (h *httpServer) newSession() (*session, error) {
	cfg := *h.cfg
	cfg.Era = EraLegacy // a session is legacy: server/discover is unknown, _meta has no say
	sess := &session{id: rand.Text(), created: time.Now(), streams: map[string]*stream{}, pings: map[string]chan *jsonrpc.Message{}}
	sess.srv = h.newServer(&cfg, sess.id)
	sess.ctx, sess.cancel = context.WithCancelCause(h.ctx)
	var evict *session
	h.mu.Lock()
	if len(h.sessions) >= maxSessions {
		evict = h.oldestIdleLocked()
		if evict == nil {
			h.mu.Unlock()
			sess.cancel(nil)
			return nil, errTooManySessions
		}
	}
	h.sessions[sess.id] = sess
	h.mu.Unlock()
	if evict != nil {
		h.endSession(evict, "evicted: too many sessions", false)
	}
	h.rec.add(Event{Event: EventSessionStart, Session: sess.id})
	return sess, nil
}

// oldestIdleLocked returns the oldest session with no request running and
// no GET stream. Its caller holds h.mu.
func (h *httpServer) oldestIdleLocked() *session {
	var oldest *session
	for _, s := range h.sessions {
		s.srv.mu.Lock()
		busy := len(s.srv.calls) > 0
		s.srv.mu.Unlock()
		s.mu.Lock()
		busy = busy || s.get
		s.mu.Unlock()
		if !busy && (oldest == nil || s.created.Before(oldest.created)) {
			oldest = s
		}
	}
	return oldest
}

// session returns the live session id, or nil.
func (h *httpServer) session(id string) *session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

// endSession ends a live session: later requests naming it get 404. With
// cancelCalls, each request running in it is cancelled with reason,
// recorded like a notifications/cancelled; the others end as at shutdown.
func (h *httpServer) endSession(sess *session, reason string, cancelCalls bool) bool {
	h.mu.Lock()
	live := h.sessions[sess.id] == sess
	delete(h.sessions, sess.id)
	h.mu.Unlock()
	if !live {
		return false
	}
	h.rec.add(Event{Event: EventSessionEnd, Session: sess.id, Reason: reason})
	h.log.Info("session ended", "session", sess.id, "reason", reason)
	if cancelCalls {
		sess.srv.mu.Lock()
		calls := make([]*call, 0, len(sess.srv.calls))
		for _, c := range sess.srv.calls {
			calls = append(calls, c)
		}
		sess.srv.mu.Unlock()
		slices.SortFunc(calls, func(a, b *call) int { return a.start.Compare(b.start) })
		for _, c := range calls {
			sess.srv.cancelCall(c, Event{Event: EventCancelled, RequestID: c.id.Raw(), Reason: reason, Known: new(false)})
		}
	}
	sess.cancel(errSessionEnded)
	return true
}

// priming reports whether the session's SSE streams start with a priming
// event (an id and no data), as 2025-11-25 asks.
func (sess *session) priming() bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.version >= mcp.Version20251125
}

// sessionStream returns the stream of a new request of sess: a resumable
// SSE stream, or a JSON answer.
func (h *httpServer) sessionStream(sess *session, sse bool, id jsonrpc.ID) *stream {
	if !sse {
		return h.newStream("", false, id)
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.next++
	st := h.newStream(strconv.Itoa(sess.next), true, id)
	sess.streams[st.id] = st
	return st
}

// streamDone keeps a finished stream for late resumption, up to a bound.
func (sess *session) streamDone(st *stream) {
	if st.id == "" {
		return
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.finished = append(sess.finished, st.id)
	if len(sess.finished) > finishedStreams {
		delete(sess.streams, sess.finished[0])
		sess.finished = slices.Delete(sess.finished, 0, 1)
	}
}

// dropStream forgets a stream whose request never ran.
func (sess *session) dropStream(st *stream) {
	if st.id == "" {
		return
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	delete(sess.streams, st.id)
}

// initialize starts a session with a POSTed initialize: its response
// carries Mcp-Session-Id. A failed initialize ends the session.
func (h *httpServer) initialize(x *exchange) {
	sess, err := h.newSession()
	if err != nil {
		h.reject(x, http.StatusServiceUnavailable, invalidRequest("%v", err))
		return
	}
	x.session = sess.id
	x.w.Header().Set(hdrSessionID, sess.id)
	req := parseRequest(x.msg)
	st := h.sessionStream(sess, req.token != nil, x.msg.ID)
	st.onResponse = func(m *jsonrpc.Message) {
		// Before the client can see the response, so that its next
		// request finds the version.
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.ProtocolVersion == "" {
			h.endSession(sess, "initialize failed", false)
			return
		}
		sess.mu.Lock()
		sess.version = res.ProtocolVersion
		sess.mu.Unlock()
	}
	h.run(x, sess.srv, sess, req, st, 0)
}

// legacyPost handles a message POSTed in a live session.
func (h *httpServer) legacyPost(x *exchange, sess *session) {
	m := x.msg
	if v := x.r.Header.Get(hdrProtocolVersion); v != "" {
		sess.mu.Lock()
		negotiated := sess.version
		sess.mu.Unlock()
		switch {
		case !slices.Contains(h.cfg.legacy, v):
			h.reject(x, http.StatusBadRequest, invalidRequest("unsupported %s %q in a legacy session (supported: %s)", hdrProtocolVersion, v, strings.Join(h.cfg.legacy, ", ")))
			return
		case negotiated != "" && v != negotiated:
			h.reject(x, http.StatusBadRequest, invalidRequest("%s %q is not the session's negotiated version %q", hdrProtocolVersion, v, negotiated))
			return
		}
	}
	switch {
	case m.IsResponse():
		if !sess.srv.questions.Answer(m) {
			sess.answerPing(h, m)
		}
		accepted(x.w)
	case m.IsNotification():
		if m.Method == mcp.MethodCancelled {
			sess.srv.cancelled(m.Params)
		}
		accepted(x.w)
	default:
		req := parseRequest(m)
		ping := h.cfg.PingClient && m.Method == mcp.MethodToolsCall && req.err == nil
		h.run(x, sess.srv, sess, req, h.sessionStream(sess, req.token != nil || ping, m.ID), 0)
	}
}

// pingClient sends a ping request on c's stream and waits for the client's
// answer (-ping-client). It returns the error c is to be answered with if
// the client answered with an error or not at all; nil if it answered, or
// if c was cancelled meanwhile (c then ends as cancelled).
func (h *httpServer) pingClient(ctx context.Context, sess *session, c *call) *jsonrpc.Error {
	id := jsonrpc.NewStringID("demo-ping-" + strconv.FormatInt(h.pingSeq.Add(1), 10))
	ch := make(chan *jsonrpc.Message, 1)
	sess.mu.Lock()
	sess.pings[id.String()] = ch
	sess.mu.Unlock()
	defer func() {
		sess.mu.Lock()
		delete(sess.pings, id.String())
		sess.mu.Unlock()
	}()
	s := sess.srv
	start := time.Now()
	s.record(Event{Event: EventPingClient, ID: id.Raw(), Method: mcp.MethodPing, RequestID: c.id.Raw(), Tool: c.tool})
	if !s.notify(c, jsonrpc.NewRequest(id, mcp.MethodPing, nil)) {
		return nil
	}
	t := time.NewTimer(pingTimeout)
	defer t.Stop()
	ev := Event{Event: EventPingAnswered, ID: id.Raw(), RequestID: c.id.Raw(), Tool: c.tool}
	select {
	case resp := <-ch:
		ev.ElapsedMs = new(time.Since(start).Milliseconds())
		if resp.Error != nil {
			ev.Outcome, ev.Code, ev.Reason = OutcomeError, resp.Error.Code, resp.Error.Message
			s.record(ev)
			return jsonrpc.Errorf(jsonrpc.CodeInternalError, "the client answered the server's ping with error %d: %s", resp.Error.Code, resp.Error.Message)
		}
		ev.Outcome = OutcomeResult
		s.record(ev)
		return nil
	case <-ctx.Done():
		return nil
	case <-t.C:
		ev.Outcome = "timeout"
		s.record(ev)
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "the client did not answer the server's ping within %v", pingTimeout)
	}
}

// answerPing hands a POSTed response to the ping waiting for it.
func (sess *session) answerPing(h *httpServer, m *jsonrpc.Message) {
	sess.mu.Lock()
	ch := sess.pings[m.ID.String()]
	sess.mu.Unlock()
	if ch == nil {
		h.log.Info("a response to no request of ours", "id", m.ID.String(), "session", sess.id)
		return
	}
	select {
	case ch <- m:
	default: // answered twice: the first counts
	}
}

// get handles a GET: a resumption with Last-Event-ID, or the session's
// standalone stream.
func (h *httpServer) get(x *exchange) {
	r := x.r
	if h.cfg.Era == EraModern {
		h.notAllowed(x, "POST", "this server speaks only 2026-07-28, which has no GET stream")
		return
	}
	if !accepts(r, "text/event-stream") {
		h.reject(x, http.StatusNotAcceptable, invalidRequest("Accept must list text/event-stream, not %q", r.Header.Get("Accept")))
		return
	}
	sid := r.Header.Get(hdrSessionID)
	if sid == "" {
		if v := r.Header.Get(hdrProtocolVersion); v != "" && mcp.IsModern(v) {
			h.notAllowed(x, "POST", "2026-07-28 has no GET stream")
			return
		}
		h.reject(x, http.StatusBadRequest, invalidRequest("missing %s header", hdrSessionID))
		return
	}
	x.session = sid
	sess := h.session(sid)
	if sess == nil {
		h.reject(x, http.StatusNotFound, invalidRequest("session %q not found: it ended, or never was; initialize again", sid))
		return
	}
	if id := r.Header.Get(hdrLastEventID); id != "" {
		h.resume(x, sess, id)
		return
	}
	if h.cfg.NoGet {
		h.notAllowed(x, "POST, DELETE", "no standalone GET stream on this server (-no-get)")
		return
	}
	h.standalone(x, sess)
}

// resume replays the events of a request's stream after Last-Event-ID and
// continues it.
func (h *httpServer) resume(x *exchange, sess *session, lastID string) {
	sid, seqText, _ := strings.Cut(lastID, "-")
	seq, err := strconv.Atoi(seqText)
	sess.mu.Lock()
	st := sess.streams[sid]
	sess.mu.Unlock()
	if err != nil || st == nil {
		h.reject(x, http.StatusBadRequest, invalidRequest("%s %q names no stream of this session", hdrLastEventID, lastID))
		return
	}
	conn, err := st.attach(seq)
	if err != nil {
		h.reject(x, http.StatusBadRequest, invalidRequest("%s %q: %v", hdrLastEventID, lastID, err))
		return
	}
	defer st.detach(conn)
	h.rec.add(Event{Event: EventResumed, Session: sess.id, ID: st.callID.Raw(), LastEventID: lastID})
	h.log.Debug("resuming a stream", "session", sess.id, "lastEventId", lastID)
	sseHeaders(x.w)
	x.w.WriteHeader(http.StatusOK)
	http.NewResponseController(x.w).Flush()
	if end, last := st.pump(x.w, x.r, conn, seq, h.cfg.SSECloseAfter); end == endClosed {
		h.closeEarly(x, st, last)
	}
}

// standalone serves the session's standalone GET stream: the demo has no
// server-initiated messages, so it carries keep-alive comments only, until
// the client leaves, the session ends or the server stops.
func (h *httpServer) standalone(x *exchange, sess *session) {
	sess.mu.Lock()
	if sess.get {
		sess.mu.Unlock()
		h.reject(x, http.StatusConflict, invalidRequest("a standalone GET stream is already open for this session"))
		return
	}
	sess.get = true
	sess.mu.Unlock()
	defer func() {
		sess.mu.Lock()
		sess.get = false
		sess.mu.Unlock()
	}()
	h.rec.add(Event{Event: EventGetStream, Session: sess.id})
	sseHeaders(x.w)
	x.w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(x.w)
	if sse.WriteComment(x.w, "stream open") != nil || rc.Flush() != nil {
		return
	}
	t := time.NewTicker(h.cfg.KeepAlive)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if sse.WriteComment(x.w, "keep-alive") != nil || rc.Flush() != nil {
				return
			}
		case <-x.r.Context().Done():
			return
		case <-sess.ctx.Done():
			return
		case <-h.stop:
			return
		}
	}
}

// del handles DELETE: the end of a session.
func (h *httpServer) del(x *exchange) {
	if h.cfg.Era == EraModern {
		h.notAllowed(x, "POST", "this server speaks only 2026-07-28, which has no sessions")
		return
	}
	sid := x.r.Header.Get(hdrSessionID)
	if sid == "" {
		h.reject(x, http.StatusBadRequest, invalidRequest("missing %s header", hdrSessionID))
		return
	}
	x.session = sid
	sess := h.session(sid)
	if sess == nil || !h.endSession(sess, ReasonSessionDeleted, true) {
		h.reject(x, http.StatusNotFound, invalidRequest("session %q not found", sid))
		return
	}
	x.w.WriteHeader(http.StatusOK)
}
