package hostsurface

import (
	"context"
	"encoding/json"
	"errors"

	"mcpx/internal/catalog"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// Resources: every upstream's resources and templates merged, URIs as the
// upstreams wrote them unless two upstreams expose the same one (then
// mcpx://<server>/<uri> for each, see catalog.Resources); reads and
// subscriptions routed by URI.

func (s *Surface) resourcesList(ctx context.Context, h Host, r Request) {
	res := s.catalog.Resources(ctx, h.Visible(r))
	if ctx.Err() != nil {
		h.EndRequest(r, context.Cause(ctx))
		return
	}
	s.listPage(r, res.List, "resources")
}

func (s *Surface) resourceTemplatesList(ctx context.Context, h Host, r Request) {
	res := s.catalog.Resources(ctx, h.Visible(r))
	if ctx.Err() != nil {
		h.EndRequest(r, context.Cause(ctx))
		return
	}
	s.listPage(r, res.Templates, "resourceTemplates")
}

// resourceError is mcpx's own answer for a URI it cannot route: "resource
// not found", -32002 in the legacy revisions and -32602 in 2026-07-28,
// with the URI in data as both say.
func resourceError(r Request, uri string, err error) *jsonrpc.Error {
	code := int64(mcp.CodeResourceNotFound)
	if r.Modern() || errors.Is(err, catalog.ErrAmbiguousResource) {
		code = jsonrpc.CodeInvalidParams
	}
	e := jsonrpc.Errorf(code, "%v", err)
	e.Message = upperFirst(e.Message)
	e.Data = jsonrpc.MustMarshal(map[string]string{"uri": uri})
	return e
}

func upperFirst(s string) string {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// route finds the upstream of the URI the request names, or answers the
// request with the error.
func (s *Surface) route(ctx context.Context, h Host, r Request) (server, upURI, hostURI string, exposed, ok bool) {
	uri, rpcErr := stringParam(r, "uri")
	if rpcErr != nil {
		fail(r, rpcErr)
		return "", "", "", false, false
	}
	res := s.catalog.Resources(ctx, h.Visible(r))
	if ctx.Err() != nil {
		h.EndRequest(r, context.Cause(ctx))
		return "", "", "", false, false
	}
	server, upURI, exposed, err := res.Route(uri)
	if err != nil {
		fail(r, resourceError(r, uri, err))
		return "", "", "", false, false
	}
	return server, upURI, uri, exposed, true
}

func (s *Surface) resourcesRead(ctx context.Context, h Host, r Request) {
	server, upURI, hostURI, exposed, ok := s.route(ctx, h, r)
	if !ok {
		return
	}
	var adapt func(json.RawMessage) json.RawMessage
	if exposed {
		// The host named the resource in mcpx's form: its contents say
		// so too, so that they match what it asked for.
		adapt = func(res json.RawMessage) json.RawMessage { return renameContents(res, upURI, hostURI) }
	}
	s.relayRequest(ctx, h, r, server, mcp.MethodResourcesRead, forwardParams(r, "uri", upURI), adapt)
}

// renameContents sets contents[i].uri to hostURI where it is upURI.
func renameContents(res json.RawMessage, upURI, hostURI string) json.RawMessage {
	obj, err := jsonrpc.ParseObject(res)
	if err != nil {
		return res
	}
	raw, _ := obj.Get("contents")
	var contents []json.RawMessage
	if json.Unmarshal(raw, &contents) != nil {
		return res
	}
	for i, c := range contents {
		co, err := jsonrpc.ParseObject(c)
		if err != nil {
			continue
		}
		if u, ok := co.Get("uri"); ok {
			var s string
			if json.Unmarshal(u, &s) == nil && s == upURI {
				co.Set("uri", jsonrpc.MustMarshal(hostURI))
				contents[i] = co.Bytes()
			}
		}
	}
	obj.Set("contents", jsonrpc.MustMarshal(contents))
	return obj.Bytes()
}

// resourcesSubscribe subscribes a legacy session to a resource: mcpx
// subscribes upstream once per URI, for every host that asks, and tells
// each of them of updates under the URI it used. Only a session with a
// stream hears of updates: stdio, or an HTTP session's GET stream.
func (s *Surface) resourcesSubscribe(ctx context.Context, h Host, r Request) {
	server, upURI, hostURI, _, ok := s.route(ctx, h, r)
	if !ok {
		return
	}
	r.SetServer(server)
	if err := s.subscribe(ctx, legacySub{s, h}, subKey{server, upURI}, hostURI); err != nil {
		h.EndRequest(r, err)
		return
	}
	reply(r, json.RawMessage("{}"))
}

func (s *Surface) resourcesUnsubscribe(ctx context.Context, h Host, r Request) {
	server, upURI, _, _, ok := s.route(ctx, h, r)
	if !ok {
		return
	}
	r.SetServer(server)
	had, err := s.unsubscribe(ctx, legacySub{s, h}, subKey{server, upURI})
	switch {
	case err != nil:
		h.EndRequest(r, err)
	case !had:
		fail(r, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: not subscribed to %s", jsonString(mustString(r, "uri"))))
	default:
		reply(r, json.RawMessage("{}"))
	}
}

func mustString(r Request, key string) string {
	s, _ := stringParam(r, key)
	return s
}
