package hostserver

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

func (hs *hostSession) resourcesList(ctx context.Context, req *request) {
	r := hs.srv.catalog.Resources(ctx, hs.toolFilter(req).visible())
	if ctx.Err() != nil {
		hs.end(req, context.Cause(ctx))
		return
	}
	hs.listPage(req, r.List, "resources")
}

func (hs *hostSession) resourceTemplatesList(ctx context.Context, req *request) {
	r := hs.srv.catalog.Resources(ctx, hs.toolFilter(req).visible())
	if ctx.Err() != nil {
		hs.end(req, context.Cause(ctx))
		return
	}
	hs.listPage(req, r.Templates, "resourceTemplates")
}

// resourceError is mcpx's own answer for a URI it cannot route: "resource
// not found", -32002 in the legacy revisions and -32602 in 2026-07-28,
// with the URI in data as both say.
func resourceError(req *request, uri string, err error) *jsonrpc.Error {
	code := int64(mcp.CodeResourceNotFound)
	if req.modern || errors.Is(err, catalog.ErrAmbiguousResource) {
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
func (hs *hostSession) route(ctx context.Context, req *request) (server, upURI, hostURI string, exposed, ok bool) {
	uri, rpcErr := stringParam(req, "uri")
	if rpcErr != nil {
		fail(req.sink, req.msg.ID, rpcErr)
		return "", "", "", false, false
	}
	r := hs.srv.catalog.Resources(ctx, hs.toolFilter(req).visible())
	if ctx.Err() != nil {
		hs.end(req, context.Cause(ctx))
		return "", "", "", false, false
	}
	server, upURI, exposed, err := r.Route(uri)
	if err != nil {
		fail(req.sink, req.msg.ID, resourceError(req, uri, err))
		return "", "", "", false, false
	}
	return server, upURI, uri, exposed, true
}

func (hs *hostSession) resourcesRead(ctx context.Context, req *request) {
	server, upURI, hostURI, exposed, ok := hs.route(ctx, req)
	if !ok {
		return
	}
	var adapt func(json.RawMessage) json.RawMessage
	if exposed {
		// The host named the resource in mcpx's form: its contents say
		// so too, so that they match what it asked for.
		adapt = func(res json.RawMessage) json.RawMessage { return renameContents(res, upURI, hostURI) }
	}
	hs.relayRequest(ctx, req, server, mcp.MethodResourcesRead, forwardParams(req, "uri", upURI), adapt)
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
func (hs *hostSession) resourcesSubscribe(ctx context.Context, req *request) {
	server, upURI, hostURI, _, ok := hs.route(ctx, req)
	if !ok {
		return
	}
	req.server = server
	if err := hs.srv.subscribe(ctx, hs, subKey{server, upURI}, hostURI); err != nil {
		hs.end(req, err)
		return
	}
	reply(req.sink, req.msg.ID, json.RawMessage("{}"))
}

func (hs *hostSession) resourcesUnsubscribe(ctx context.Context, req *request) {
	server, upURI, _, _, ok := hs.route(ctx, req)
	if !ok {
		return
	}
	req.server = server
	had, err := hs.srv.unsubscribe(ctx, hs, subKey{server, upURI})
	switch {
	case err != nil:
		hs.end(req, err)
	case !had:
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: not subscribed to %s", jsonString(mustString(req, "uri"))))
	default:
		reply(req.sink, req.msg.ID, json.RawMessage("{}"))
	}
}

func mustString(req *request, key string) string {
	s, _ := stringParam(req, key)
	return s
}
