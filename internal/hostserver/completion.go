package hostserver

import (
	"context"
	"encoding/json"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// complete serves completion/complete: routed by its ref (a prompt by its
// exposed name, a resource or template by its URI) to the upstream that
// owns it, with the ref rewritten to the upstream's name or URI only where
// mcpx renamed it; the result is relayed byte for byte.
func (hs *hostSession) complete(ctx context.Context, req *request) {
	raw, _ := req.params.Get("ref")
	var ref struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	refObj, err := jsonrpc.ParseObject(raw)
	if err != nil || json.Unmarshal(raw, &ref) != nil {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: completion/complete needs a ref object"))
		return
	}
	var server, key, value, upstream string
	switch ref.Type {
	case "ref/prompt":
		var ok bool
		key, value = "name", ref.Name
		server, upstream, ok = hs.srv.catalog.ResolvePrompt(ctx, ref.Name, hs.toolFilter(req).visible())
		if ctx.Err() != nil {
			hs.end(req, context.Cause(ctx))
			return
		}
		if !ok {
			fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Unknown prompt: %s", ref.Name))
			return
		}
	case "ref/resource":
		r := hs.srv.catalog.Resources(ctx, hs.toolFilter(req).visible())
		if ctx.Err() != nil {
			hs.end(req, context.Cause(ctx))
			return
		}
		key, value = "uri", ref.URI
		server, upstream, err = r.RouteRef(ref.URI)
		if err != nil {
			fail(req.sink, req.msg.ID, resourceError(req, ref.URI, err))
			return
		}
	default:
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: unknown ref type %s (want ref/prompt or ref/resource)", jsonString(ref.Type)))
		return
	}
	params, _ := jsonrpc.ParseObject(req.params.Bytes())
	if upstream != value {
		refObj.Set(key, jsonrpc.MustMarshal(upstream))
		params.Set("ref", refObj.Bytes())
	}
	hs.relayRequest(ctx, req, server, mcp.MethodCompletionComplete, params, nil)
}
