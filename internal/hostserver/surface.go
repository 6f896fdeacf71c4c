package hostserver

import (
	"context"
	"encoding/json"
	"errors"

	"mcpx/internal/catalog"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// surfaceMethod is one method of this file's surface: the capability an
// upstream must have for mcpx to serve it, its handler, and whether
// 2026-07-28 removed it.
type surfaceMethod struct {
	has        func(upstreamFeatures) bool
	handle     handler
	legacyOnly bool
}

// surfaceMethods are the resources, prompts, completion and logging
// methods.
var surfaceMethods = map[string]surfaceMethod{
	mcp.MethodResourcesList:         {has: feature.resources, handle: (*hostSession).resourcesList},
	mcp.MethodResourceTemplatesList: {has: feature.resources, handle: (*hostSession).resourceTemplatesList},
	mcp.MethodResourcesRead:         {has: feature.resources, handle: (*hostSession).resourcesRead},
	mcp.MethodPromptsList:           {has: feature.prompts, handle: (*hostSession).promptsList},
	mcp.MethodPromptsGet:            {has: feature.prompts, handle: (*hostSession).promptsGet},
	mcp.MethodCompletionComplete:    {has: feature.completions, handle: (*hostSession).complete},
	mcp.MethodResourcesSubscribe:    {has: feature.resources, handle: (*hostSession).resourcesSubscribe, legacyOnly: true},
	mcp.MethodResourcesUnsubscribe:  {has: feature.resources, handle: (*hostSession).resourcesUnsubscribe, legacyOnly: true},
	mcp.MethodLoggingSetLevel:       {has: feature.logging, handle: (*hostSession).setLevel, legacyOnly: true},
}

// isSurface reports whether method is one of this file's for a host of
// its era: legacy-only methods are not, for 2026-07-28 requests (that
// revision removed them).
func isSurface(method string, modern bool) bool {
	m, ok := surfaceMethods[method]
	return ok && !(modern && m.legacyOnly)
}

// serveSurface is the handler of every method of this file. It serves a
// method only when an upstream has its capability: mcpx does not
// advertise it otherwise, and a method of a capability a server did not
// declare is -32601.
func (hs *hostSession) serveSurface(ctx context.Context, req *request) {
	m := surfaceMethods[req.msg.Method]
	if !m.has(hs.srv.features()) {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method not found: %s (no upstream serves it)", req.msg.Method))
		return
	}
	m.handle(hs, ctx, req)
}

// surfaceServed reports whether a method of this file is served now: false
// for one whose capability no upstream has (a 2026-07-28 HTTP request for
// it is then 404, as for any method not served).
func (s *Server) surfaceServed(method string) bool {
	m, ok := surfaceMethods[method]
	return !ok || m.has(s.features())
}

// feature picks one field of upstreamFeatures.
var feature = struct {
	resources, prompts, completions, logging func(upstreamFeatures) bool
}{
	func(f upstreamFeatures) bool { return f.resources },
	func(f upstreamFeatures) bool { return f.prompts },
	func(f upstreamFeatures) bool { return f.completions },
	func(f upstreamFeatures) bool { return f.logging },
}

// leaveSurface forgets what a host that has gone asked for: its resource
// subscriptions (unsubscribed upstream when it was the last) and its log
// level; and stops the upstream sessions perHost servers ran for it.
func (s *Server) leaveSurface(hs *hostSession) {
	s.leaveSubscriptions(hs)
	s.forgetLevel(hs)
	s.endHost(hs)
}

// cursorParam returns the host's cursor, "" for none, and false when it
// is not a string.
func cursorParam(req *request) (string, bool) {
	raw, ok := req.params.Get("cursor")
	if !ok || string(raw) == "null" {
		return "", true
	}
	var c string
	return c, json.Unmarshal(raw, &c) == nil
}

// stringParam returns a required string member of the request's params.
func stringParam(req *request, key string) (string, *jsonrpc.Error) {
	raw, ok := req.params.Get(key)
	var s string
	if !ok || json.Unmarshal(raw, &s) != nil || s == "" {
		return "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: %s needs a %s string", req.msg.Method, key)
	}
	return s, nil
}

// listPage answers a list request with one page of a merged list.
func (hs *hostSession) listPage(req *request, pages *catalog.Pages, field string) {
	cur, ok := cursorParam(req)
	if !ok {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: cursor must be a string"))
		return
	}
	items, next, err := pages.Page(cur)
	if err != nil {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: %v", err))
		return
	}
	res := &jsonrpc.Object{}
	res.Set(field, jsonrpc.MustMarshal(items))
	if next != "" {
		res.Set("nextCursor", jsonrpc.MustMarshal(next))
	}
	if req.modern {
		res.Set("ttlMs", json.RawMessage("0"))
		res.Set("cacheScope", json.RawMessage(`"private"`))
	}
	reply(req.sink, req.msg.ID, req.result(res.Bytes(), hs.srv.info))
}

// relayRequest sends a request upstream for the host and answers it: the
// result adapted to the host's era, or the upstream's error (-32002
// becomes -32602 for 2026-07-28 hosts, as that revision says), or mcpx's.
// adapt, if set, edits a result before that.
func (hs *hostSession) relayRequest(ctx context.Context, req *request, server, method string, params *jsonrpc.Object,
	adapt func(json.RawMessage) json.RawMessage) {
	req.server = server
	live := func() bool {
		c, ok := relay.CauseOf(context.Cause(ctx))
		return !ok || c.Answered()
	}
	onMessage, level := hs.onMessage(req, live)
	res, err := hs.srv.relay.Send(ctx, req.entry, relay.Request{
		Server: server, Method: method, Params: params, ClientCaps: hs.upstreamCaps(req), OnMessage: onMessage, LogLevel: level,
		SessionKey: hs.sessionKey(), Person: hs.who.ID(),
	})
	if err != nil {
		if c, ok := relay.CauseOf(err); ok && !c.Answered() {
			return
		}
		rpcErr := callError(err, server)
		var upErr *jsonrpc.Error
		if req.modern && errors.As(err, &upErr) && upErr.Code == mcp.CodeResourceNotFound {
			mapped := *rpcErr
			mapped.Code = jsonrpc.CodeInvalidParams
			rpcErr = &mapped
		}
		pushAnswer(req.sink, live, jsonrpc.NewError(req.msg.ID, rpcErr).Encode())
		return
	}
	if !req.modern {
		if rt := resultType(res); rt != "" && rt != mcp.ResultTypeComplete {
			// input_required: bridging it to legacy hosts is the
			// server-initiated requests' work; say so rather than hand
			// over a result the host cannot read.
			pushAnswer(req.sink, live, jsonrpc.NewError(req.msg.ID, jsonrpc.Errorf(mcp.CodeUpstreamFailed,
				"mcpx cannot yet relay a %q result of %s to a host on protocol %s", rt, method, req.version)).Encode())
			return
		}
	}
	if adapt != nil {
		res = adapt(res)
	}
	if req.modern && method == mcp.MethodResourcesRead {
		res = cacheHints(res)
	}
	pushAnswer(req.sink, live, jsonrpc.NewResult(req.msg.ID, req.result(res, hs.srv.info)).Encode())
}

func resultType(res json.RawMessage) string {
	obj, err := jsonrpc.ParseObject(res)
	if err != nil {
		return ""
	}
	raw, ok := obj.Get("resultType")
	if !ok {
		return ""
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// forwardParams copies the host's params for the upstream, with name (or
// uri) set to the upstream's; every other byte, and that one when the host
// used the upstream's own, as the host sent it.
func forwardParams(req *request, key, value string) *jsonrpc.Object {
	p, _ := jsonrpc.ParseObject(req.params.Bytes())
	if got, _ := stringParam(req, key); got != value {
		p.Set(key, jsonrpc.MustMarshal(value))
	}
	// A host's progress token means nothing upstream (mcpx relays no
	// progress for these requests) and could collide with another host's.
	if _, ok := mcp.Meta(p).Get(mcp.MetaProgressToken); ok {
		mcp.EditMeta(p, func(m *jsonrpc.Object) { m.Delete(mcp.MetaProgressToken) })
	}
	return p
}

// cacheHints gives a resources/read result for a 2026-07-28 host the
// ttlMs and cacheScope that revision requires of it, where the upstream
// (a legacy one) sent none: not to be cached, and this user's.
func cacheHints(res json.RawMessage) json.RawMessage {
	obj, err := jsonrpc.ParseObject(res)
	if err != nil {
		return res
	}
	_, ttl := obj.Get("ttlMs")
	_, scope := obj.Get("cacheScope")
	if ttl && scope {
		return res
	}
	if !ttl {
		obj.Set("ttlMs", json.RawMessage("0"))
	}
	if !scope {
		obj.Set("cacheScope", json.RawMessage(`"private"`))
	}
	return obj.Bytes()
}
