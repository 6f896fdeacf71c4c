package hosthttp

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/principal"
)

// dispatch classifies one POSTed message by era (docs/protocol-notes.md §6.3) and
// serves it:
//
//   - initialize starts a legacy session, whatever the headers say,
//     unless its _meta claims a protocol version: then it is a stateless
//     request, for a method 2026-07-28 removed (404, -32601), as the
//     TypeScript SDK's dual-era entry and the conformance suite's
//     server-stateless scenario have it;
//   - an MCP-Protocol-Version header of a stateless revision mcpx speaks
//     (2026-07-28) makes a stateless request (an Mcp-Session-Id beside it
//     is ignored, as that revision says);
//   - an Mcp-Session-Id makes a request of that legacy session;
//   - a body whose _meta names a protocol version is a stateless request
//     whose header is missing, wrong or unsupported (-32020, -32022);
//   - a header naming a revision mcpx does not speak is -32022;
//   - anything else is a legacy request without its session (400).
func (h *Server) dispatch(w http.ResponseWriter, r *http.Request, who principal.Principal, msg *jsonrpc.Message, acc Accept) {
	header := strings.TrimSpace(r.Header.Get(HeaderProtocolVersion))
	sid := r.Header.Get(HeaderSessionID)
	switch {
	case msg.Method == mcp.MethodInitialize && !hasMetaVersion(msg):
		if sid != "" {
			h.legacy(w, r, who, msg, acc, sid, header)
			return
		}
		h.initialize(w, who, msg, acc)
	case mcp.IsModern(header) && mcp.IsSupported(header):
		h.modern(w, r, who, msg, acc, header)
	case sid != "":
		h.legacy(w, r, who, msg, acc, sid, header)
	case msg.IsRequest() && hasMetaVersion(msg):
		h.modern(w, r, who, msg, acc, header)
	case header != "" && !mcp.IsSupported(header):
		Error(w, http.StatusBadRequest, idOf(msg), unsupportedVersion(header))
	default:
		Error(w, http.StatusBadRequest, idOf(msg), jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"bad request: missing Mcp-Session-Id; send initialize first, or use protocol version %s (header %s and _meta)",
			mcp.Version20260728, HeaderProtocolVersion))
	}
}

// initialize starts a legacy session: the session exists, and its id goes
// back in Mcp-Session-Id, only if initialize succeeds.
func (h *Server) initialize(w http.ResponseWriter, who principal.Principal, msg *jsonrpc.Message, acc Accept) {
	if !msg.IsRequest() {
		Error(w, http.StatusBadRequest, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: initialize must be a request"))
		return
	}
	hs := h.newHostSession(who, false)
	if hs == nil {
		Error(w, http.StatusServiceUnavailable, msg.ID, h.srv.Stopping())
		return
	}
	line := hs.Initialize(msg)
	reply, _ := jsonrpc.Decode(line)
	if reply == nil || reply.Error != nil {
		h.forget(hs)
	} else {
		sess, err := h.addSession(hs, who)
		if err != nil {
			h.forget(hs)
			status := http.StatusInternalServerError
			if errors.Is(err, errTooManySessions) {
				status = http.StatusServiceUnavailable
			}
			Error(w, status, msg.ID, jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error: %v", err))
			return
		}
		w.Header().Set(HeaderSessionID, sess.id)
	}
	WriteSingle(w, acc, line)
}

// legacy serves a message of the legacy session sid.
func (h *Server) legacy(w http.ResponseWriter, r *http.Request, who principal.Principal, msg *jsonrpc.Message, acc Accept, sid, header string) {
	sess := h.session(who, sid)
	if sess == nil {
		Error(w, http.StatusNotFound, idOf(msg), errNoSession())
		return
	}
	// The header names the session's revision; clients are not always
	// exact (the conformance suite sends 2025-03-26 in a 2025-11-25
	// session), and the session's negotiated revision is what counts, so
	// only a revision mcpx does not speak in a session is refused.
	if header != "" && !mcp.IsLegacy(header) {
		Error(w, http.StatusBadRequest, idOf(msg), jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"bad request: %s %s is not a revision of an initialize-based session", HeaderProtocolVersion, Quote(header)))
		return
	}
	if !h.enter(sess) {
		Error(w, http.StatusNotFound, idOf(msg), errNoSession())
		return
	}
	defer h.leave(sess)
	hs := sess.hs
	hs.KeepSubject(r)
	switch {
	case msg.IsRequest():
		h.respond(w, r, hs, msg, parseParams(msg), acc, false)
	case msg.IsNotification():
		hs.Notify(msg)
		w.WriteHeader(http.StatusAccepted)
	default:
		hs.Answer(msg) // to a request mcpx relayed from an upstream
		w.WriteHeader(http.StatusAccepted)
	}
}

// modern serves a stateless 2026-07-28 message: its headers must match its
// body (-32020), its revision must be one mcpx speaks (-32022), and its
// method one mcpx serves (404, -32601). Notifications are accepted and
// ignored: that revision defines none for HTTP (a host cancels by closing
// the request's stream).
func (h *Server) modern(w http.ResponseWriter, r *http.Request, who principal.Principal, msg *jsonrpc.Message, acc Accept, header string) {
	if msg.IsNotification() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if !msg.IsRequest() {
		Error(w, http.StatusBadRequest, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"invalid request: a %s client sends no JSON-RPC responses", mcp.Version20260728))
		return
	}
	params := parseParams(msg)
	if status, rpcErr := checkModern(r.Header, msg, params, header, h.srv.Knows); rpcErr != nil {
		Error(w, status, msg.ID, rpcErr)
		return
	}
	if !h.srv.Served(msg.Method) {
		Error(w, http.StatusNotFound, msg.ID, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method not found: %s (no upstream serves it)", msg.Method))
		return
	}
	if rpcErr := h.checkParamHeaders(r.Context(), r.Header, msg, params); rpcErr != nil {
		Error(w, http.StatusBadRequest, msg.ID, rpcErr)
		return
	}
	hs := h.newHostSession(who, true)
	if hs == nil {
		Error(w, http.StatusServiceUnavailable, msg.ID, h.srv.Stopping())
		return
	}
	hs.KeepSubject(r)
	defer h.forget(hs)
	w.Header().Set(HeaderProtocolVersion, header)
	h.respond(w, r, hs, msg, params, acc, true)
	hs.Close()
}

// checkModern validates a 2026-07-28 request's headers against its body and
// returns the status and error it is refused with, if it is; serves says
// knows says which methods the sessions serve ([Sessions.Knows]).
func checkModern(hdr http.Header, msg *jsonrpc.Message, params reqParams, header string, knows func(method string) bool) (int, *jsonrpc.Error) {
	meta := params.meta
	v, ok := mcp.MetaString(meta, mcp.MetaProtocolVersion)
	switch {
	case !ok:
		return http.StatusBadRequest, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: missing _meta %q", mcp.MetaProtocolVersion)
	case header == "":
		return http.StatusBadRequest, headerMismatch("missing %s header (want %s, as in _meta)", HeaderProtocolVersion, Quote(v))
	case header != v:
		return http.StatusBadRequest, headerMismatch("%s header %s does not match _meta protocolVersion %s", HeaderProtocolVersion, Quote(header), Quote(v))
	case !mcp.IsSupported(v) || !mcp.IsModern(v):
		return http.StatusBadRequest, unsupportedVersion(v)
	}
	method, ok := HeaderValue(hdr, HeaderMethod)
	switch {
	case !ok:
		return http.StatusBadRequest, headerMismatch("missing %s header (want %s)", HeaderMethod, Quote(msg.Method))
	case method != msg.Method:
		return http.StatusBadRequest, headerMismatch("%s header %s does not match the body's method %s", HeaderMethod, Quote(method), Quote(msg.Method))
	}
	if key := nameParam(msg.Method); key != "" {
		body, inBody := params.str(key)
		raw, inHeader := HeaderValue(hdr, HeaderName)
		name, err := DecodeHeaderValue(raw)
		switch {
		case inBody && !inHeader:
			return http.StatusBadRequest, headerMismatch("missing %s header (want params.%s %s)", HeaderName, key, Quote(body))
		case inHeader && err != nil:
			return http.StatusBadRequest, headerMismatch("malformed %s header: %v", HeaderName, err)
		case inHeader && !inBody:
			return http.StatusBadRequest, headerMismatch("%s header %s, but the body has no params.%s", HeaderName, Quote(name), key)
		case inHeader && name != body:
			return http.StatusBadRequest, headerMismatch("%s header %s does not match params.%s %s", HeaderName, Quote(name), key, Quote(body))
		}
	}
	if _, ok := meta.Get(mcp.MetaClientCapabilities); !ok {
		return http.StatusBadRequest, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: missing _meta %q", mcp.MetaClientCapabilities)
	}
	if !knows(msg.Method) {
		return http.StatusNotFound, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method not found: %s", msg.Method)
	}
	return 0, nil
}

// nameParam is the params member Mcp-Name mirrors for method, if any.
func nameParam(method string) string {
	switch method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		return "name"
	case mcp.MethodResourcesRead:
		return "uri"
	case mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
		return "taskId"
	}
	return ""
}

func headerMismatch(format string, args ...any) *jsonrpc.Error {
	e := jsonrpc.Errorf(mcp.CodeHeaderMismatch, format, args...)
	e.Message = "Header mismatch: " + e.Message
	return e
}

// unsupportedVersion is -32022 for a request without a session;
// data.supported lists the revisions such a request may use (the
// stateless ones: an initialize-based revision needs a session).
func unsupportedVersion(v string) *jsonrpc.Error {
	return &jsonrpc.Error{
		Code:    mcp.CodeUnsupportedProtocolVersion,
		Message: "Unsupported protocol version: " + Quote(v),
		Data: jsonrpc.MustMarshal(struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}{mcp.ModernVersions(), v}),
	}
}

func hasMetaVersion(msg *jsonrpc.Message) bool {
	_, ok := metaOf(msg).Get(mcp.MetaProtocolVersion)
	return ok
}

func idOf(msg *jsonrpc.Message) jsonrpc.ID {
	if msg.ID.IsValid() {
		return msg.ID
	}
	return jsonrpc.NullID
}

// respond runs one request of hs and streams what it produces to w. For a
// 2026-07-28 request (cancelOnClose), the host closing the stream before
// the response cancels the request.
func (h *Server) respond(w http.ResponseWriter, r *http.Request, hs Session, msg *jsonrpc.Message, params reqParams, acc Accept, cancelOnClose bool) {
	out := h.newStream(w, r, hs, msg, params, acc)
	out.modern = cancelOnClose
	hs.Request(msg, out)
	if cancelOnClose {
		stop := context.AfterFunc(r.Context(), func() {
			if !out.answered() {
				hs.CancelRequest(msg.ID)
			}
		})
		defer stop()
	}
	out.serve()
}
