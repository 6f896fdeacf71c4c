package hostsurface

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"

	"mcpx/internal/catalog"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// handler serves one method of the surface for host h.
type handler func(s *Surface, ctx context.Context, h Host, r Request)

// surfaceMethod is one method of the surface: the capability an upstream
// must have for mcpx to serve it, its handler, and whether 2026-07-28
// removed it.
type surfaceMethod struct {
	has        func(Features) bool
	handle     handler
	legacyOnly bool
}

// surfaceMethods are the resources, prompts, completion and logging
// methods.
var surfaceMethods = map[string]surfaceMethod{
	mcp.MethodResourcesList:         {has: feature.resources, handle: (*Surface).resourcesList},
	mcp.MethodResourceTemplatesList: {has: feature.resources, handle: (*Surface).resourceTemplatesList},
	mcp.MethodResourcesRead:         {has: feature.resources, handle: (*Surface).resourcesRead},
	mcp.MethodPromptsList:           {has: feature.prompts, handle: (*Surface).promptsList},
	mcp.MethodPromptsGet:            {has: feature.prompts, handle: (*Surface).promptsGet},
	mcp.MethodCompletionComplete:    {has: feature.completions, handle: (*Surface).complete},
	mcp.MethodResourcesSubscribe:    {has: feature.resources, handle: (*Surface).resourcesSubscribe, legacyOnly: true},
	mcp.MethodResourcesUnsubscribe:  {has: feature.resources, handle: (*Surface).resourcesUnsubscribe, legacyOnly: true},
	mcp.MethodLoggingSetLevel:       {has: feature.logging, handle: (*Surface).setLevel, legacyOnly: true},
}

// Methods are the methods Serve serves, of every era.
func Methods() []string {
	return slices.Sorted(maps.Keys(surfaceMethods))
}

// IsMethod reports whether method is one Serve serves for a host of its
// era: legacy-only methods are not, for 2026-07-28 requests (that
// revision removed them).
func IsMethod(method string, modern bool) bool {
	m, ok := surfaceMethods[method]
	return ok && !(modern && m.legacyOnly)
}

// Serve is the handler of every method of the surface. It serves a
// method only when an upstream has its capability: mcpx does not
// advertise it otherwise, and a method of a capability a server did not
// declare is -32601.
func (s *Surface) Serve(ctx context.Context, h Host, r Request) {
	m := surfaceMethods[r.Message().Method]
	if !m.has(s.Features()) {
		fail(r, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method not found: %s (no upstream serves it)", r.Message().Method))
		return
	}
	m.handle(s, ctx, h, r)
}

// Served reports whether a method of the surface is served now: false
// for one whose capability no upstream has (a 2026-07-28 HTTP request for
// it is then 404, as for any method not served).
func (s *Surface) Served(method string) bool {
	m, ok := surfaceMethods[method]
	return !ok || m.has(s.Features())
}

// feature picks one field of Features.
var feature = struct {
	resources, prompts, completions, logging func(Features) bool
}{
	func(f Features) bool { return f.Resources },
	func(f Features) bool { return f.Prompts },
	func(f Features) bool { return f.Completions },
	func(f Features) bool { return f.Logging },
}

// Leave forgets what a host that has gone asked for: its resource
// subscriptions (unsubscribed upstream when it was the last) and its log
// level.
func (s *Surface) Leave(h Host) {
	s.leaveSubscriptions(legacySub{s, h})
	s.forgetLevel(h)
}

// cursorParam returns the host's cursor, "" for none, and false when it
// is not a string.
func cursorParam(r Request) (string, bool) {
	raw, ok := r.Params().Get("cursor")
	if !ok || string(raw) == "null" {
		return "", true
	}
	var c string
	return c, json.Unmarshal(raw, &c) == nil
}

// stringParam returns a required string member of the request's params.
func stringParam(r Request, key string) (string, *jsonrpc.Error) {
	raw, ok := r.Params().Get(key)
	var s string
	if !ok || json.Unmarshal(raw, &s) != nil || s == "" {
		return "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: %s needs a %s string", r.Message().Method, key)
	}
	return s, nil
}

// listPage answers a list request with one page of a merged list.
func (s *Surface) listPage(r Request, pages *catalog.Pages, field string) {
	cur, ok := cursorParam(r)
	if !ok {
		fail(r, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: cursor must be a string"))
		return
	}
	items, next, err := pages.Page(cur)
	if err != nil {
		fail(r, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: %v", err))
		return
	}
	res := &jsonrpc.Object{}
	res.Set(field, jsonrpc.MustMarshal(items))
	if next != "" {
		res.Set("nextCursor", jsonrpc.MustMarshal(next))
	}
	if r.Modern() {
		res.Set("ttlMs", json.RawMessage("0"))
		res.Set("cacheScope", json.RawMessage(`"private"`))
	}
	reply(r, r.Result(res.Bytes(), s.info))
}

// relayRequest sends a request upstream for the host and answers it: the
// result adapted to the host's era, or the upstream's error (-32002
// becomes -32602 for 2026-07-28 hosts, as that revision says), or mcpx's.
// adapt, if set, edits a result before that.
func (s *Surface) relayRequest(ctx context.Context, h Host, r Request, server, method string, params *jsonrpc.Object,
	adapt func(json.RawMessage) json.RawMessage) {
	r.SetServer(server)
	live := func() bool {
		c, ok := relay.CauseOf(context.Cause(ctx))
		return !ok || c.Answered()
	}
	onMessage, level := s.OnMessage(h, r, live)
	res, err := s.relay.Send(ctx, r.Entry(), relay.Request{
		Server: server, Method: method, Params: params, ClientCaps: h.UpstreamCaps(r), OnMessage: onMessage, LogLevel: level,
		SessionKey: h.SessionKey(), Person: h.Person(),
	})
	if err != nil {
		if c, ok := relay.CauseOf(err); ok && !c.Answered() {
			return
		}
		rpcErr, _ := relay.RPCError(err, server)
		var upErr *jsonrpc.Error
		if r.Modern() && errors.As(err, &upErr) && upErr.Code == mcp.CodeResourceNotFound {
			mapped := *rpcErr
			mapped.Code = jsonrpc.CodeInvalidParams
			rpcErr = &mapped
		}
		r.Answer(live, jsonrpc.NewError(r.Message().ID, rpcErr).Encode())
		return
	}
	if !r.Modern() {
		if rt := resultType(res); rt != "" && rt != mcp.ResultTypeComplete {
			// input_required: bridging it to legacy hosts is the
			// server-initiated requests' work; say so rather than hand
			// over a result the host cannot read.
			r.Answer(live, jsonrpc.NewError(r.Message().ID, jsonrpc.Errorf(mcp.CodeUpstreamFailed,
				"mcpx cannot yet relay a %q result of %s to a host on protocol %s", rt, method, r.Version())).Encode())
			return
		}
	}
	if adapt != nil {
		res = adapt(res)
	}
	if r.Modern() && method == mcp.MethodResourcesRead {
		res = cacheHints(res)
	}
	r.Answer(live, jsonrpc.NewResult(r.Message().ID, r.Result(res, s.info)).Encode())
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
func forwardParams(r Request, key, value string) *jsonrpc.Object {
	p, _ := jsonrpc.ParseObject(r.Params().Bytes())
	if got, _ := stringParam(r, key); got != value {
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
