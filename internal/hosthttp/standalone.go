package hosthttp

import (
	"context"
	"net/http"
	"strings"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/principal"
)

// A legacy session's standalone stream: GET with the session's id opens an
// SSE stream that carries what mcpx tells the session outside any of its
// requests (notifications/tools/list_changed). One per session at a time,
// as the TypeScript SDK's server has it (a second GET gets 409): mcpx
// sends each message on one stream only, and a host has no use for two.
// The stream lives until the host closes it, the session ends (DELETE,
// idle eviction) or the face closes; while open, it keeps its session from
// being evicted as idle. Its events carry no ids: mcpx does not replay a
// standalone stream, so a GET with Last-Event-ID opens a fresh one.

// get serves GET: a legacy session's standalone stream.
func (h *Server) get(w http.ResponseWriter, r *http.Request, who principal.Principal) {
	if v := strings.TrimSpace(r.Header.Get(HeaderProtocolVersion)); mcp.IsModern(v) {
		w.Header().Set("Allow", "POST")
		Error(w, http.StatusMethodNotAllowed, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"method GET not allowed: protocol version %s has no standalone stream (use subscriptions/listen)", v))
		return
	}
	if !ParseAccept(r.Header.Values("Accept")).SSE {
		Error(w, http.StatusNotAcceptable, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"not acceptable: a GET stream is text/event-stream"))
		return
	}
	sid := r.Header.Get(HeaderSessionID)
	if sid == "" {
		Error(w, http.StatusBadRequest, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"bad request: GET needs the Mcp-Session-Id header of a session (send initialize first)"))
		return
	}
	sess := h.session(who, sid)
	if sess == nil {
		Error(w, http.StatusNotFound, jsonrpc.NullID, errNoSession())
		return
	}
	hs := sess.hs
	stream := &Stream{
		q: h.srv.NewQueue(), w: w, rc: http.NewResponseController(w), ctx: r.Context(), acc: Accept{SSE: true}, log: h.log,
		host: hs.ID(), id: jsonrpc.NullID, keepAlive: h.opts.KeepAlive, wantSSE: true,
	}
	h.mu.Lock()
	switch {
	case sess.ended || h.closed:
		h.mu.Unlock()
		Error(w, http.StatusNotFound, jsonrpc.NullID, errNoSession())
		return
	case sess.stream != nil:
		h.mu.Unlock()
		Error(w, http.StatusConflict, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"conflict: the session already has a GET stream open"))
		return
	}
	sess.stream = stream
	sess.active++
	h.mu.Unlock()
	hs.Watch(stream)
	h.log.Debug("http session opened its stream", "host", hs.ID())

	stop := context.AfterFunc(r.Context(), stream.finish) // the host left
	stream.serve()                                        // until finish
	stop()

	hs.Watch(nil)
	h.mu.Lock()
	if sess.stream == stream {
		sess.stream = nil
	}
	h.mu.Unlock()
	h.leave(sess)
	h.log.Debug("http session's stream ended", "host", hs.ID())
}
