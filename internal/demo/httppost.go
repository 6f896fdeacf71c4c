package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/sse"
)

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

var surfaceMethods = map[string]bool{mcp.MethodResourcesList: true, mcp.MethodResourceTemplatesList: true, mcp.MethodResourcesRead: true,
	mcp.MethodPromptsList: true, mcp.MethodPromptsGet: true, mcp.MethodCompletionComplete: true, mcp.MethodSubscriptionsListen: true}

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
	if params := headerParamsOf()[req.name]; m.Method == mcp.MethodToolsCall && len(params) > 0 {
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
