package hostserver

import (
	"context"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// Prompts: every upstream's prompts merged, named like tools
// (<server>__<prompt>, or bare where the tool naming allows it).

func (hs *hostSession) promptsList(ctx context.Context, req *request) {
	p := hs.srv.catalog.Prompts(ctx, hs.toolFilter(req).visible())
	if ctx.Err() != nil {
		hs.end(req, context.Cause(ctx))
		return
	}
	hs.listPage(req, p.Pages, "prompts")
}

func (hs *hostSession) promptsGet(ctx context.Context, req *request) {
	name, rpcErr := stringParam(req, "name")
	if rpcErr != nil {
		fail(req.sink, req.msg.ID, rpcErr)
		return
	}
	server, prompt, ok := hs.srv.catalog.ResolvePrompt(ctx, name, hs.toolFilter(req).visible())
	if ctx.Err() != nil {
		hs.end(req, context.Cause(ctx))
		return
	}
	if !ok {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Unknown prompt: %s", name))
		return
	}
	hs.relayRequest(ctx, req, server, mcp.MethodPromptsGet, forwardParams(req, "name", prompt), nil)
}
