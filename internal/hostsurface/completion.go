package hostsurface

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
func (s *Surface) complete(ctx context.Context, h Host, r Request) {
	raw, _ := r.Params().Get("ref")
	var ref struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	refObj, err := jsonrpc.ParseObject(raw)
	if err != nil || json.Unmarshal(raw, &ref) != nil {
		fail(r, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: completion/complete needs a ref object"))
		return
	}
	var server, key, value, upstream string
	switch ref.Type {
	case "ref/prompt":
		var ok bool
		key, value = "name", ref.Name
		server, upstream, ok = s.catalog.ResolvePrompt(ctx, ref.Name, h.Visible(r))
		if ctx.Err() != nil {
			h.EndRequest(r, context.Cause(ctx))
			return
		}
		if !ok {
			fail(r, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Unknown prompt: %s", ref.Name))
			return
		}
	case "ref/resource":
		res := s.catalog.Resources(ctx, h.Visible(r))
		if ctx.Err() != nil {
			h.EndRequest(r, context.Cause(ctx))
			return
		}
		key, value = "uri", ref.URI
		server, upstream, err = res.RouteRef(ref.URI)
		if err != nil {
			fail(r, resourceError(r, ref.URI, err))
			return
		}
	default:
		fail(r, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: unknown ref type %s (want ref/prompt or ref/resource)", jsonString(ref.Type)))
		return
	}
	params, _ := jsonrpc.ParseObject(r.Params().Bytes())
	if upstream != value {
		refObj.Set(key, jsonrpc.MustMarshal(upstream))
		params.Set("ref", refObj.Bytes())
	}
	s.relayRequest(ctx, h, r, server, mcp.MethodCompletionComplete, params, nil)
}
