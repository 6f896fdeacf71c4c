package hostsurface

import (
	"context"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// Prompts: every upstream's prompts merged, named like tools
// (<server>__<prompt>, or bare where the tool naming allows it).

func (s *Surface) promptsList(ctx context.Context, h Host, r Request) {
	p := s.catalog.Prompts(ctx, h.Visible(r))
	if ctx.Err() != nil {
		h.EndRequest(r, context.Cause(ctx))
		return
	}
	s.listPage(r, p.Pages, "prompts")
}

func (s *Surface) promptsGet(ctx context.Context, h Host, r Request) {
	name, rpcErr := stringParam(r, "name")
	if rpcErr != nil {
		fail(r, rpcErr)
		return
	}
	server, prompt, ok := s.catalog.ResolvePrompt(ctx, name, h.Visible(r))
	if ctx.Err() != nil {
		h.EndRequest(r, context.Cause(ctx))
		return
	}
	if !ok {
		fail(r, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Unknown prompt: %s", name))
		return
	}
	s.relayRequest(ctx, h, r, server, mcp.MethodPromptsGet, forwardParams(r, "name", prompt), nil)
}
