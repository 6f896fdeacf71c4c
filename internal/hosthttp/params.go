package hosthttp

import (
	"context"
	"net/http"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// checkParamHeaders validates the Mcp-Param-* headers of a 2026-07-28
// tools/call against its arguments, as whoever processes the body must
// (SEP-2243): for each x-mcp-header annotation of the called tool, a value
// in the arguments needs its header, and a header (base64 sentinel decoded
// first; a value without both markers is literal) must equal the value.
// A mismatch is -32020 (with HTTP 400). A tool mcpx does not list is left
// to the call, which says it is unknown.
func (h *Server) checkParamHeaders(ctx context.Context, hdr http.Header, msg *jsonrpc.Message, params reqParams) *jsonrpc.Error {
	if msg.Method != mcp.MethodToolsCall {
		return nil
	}
	name, ok := params.str("name")
	if !ok {
		return nil
	}
	args, _ := params.get("arguments")
	values, ok := h.srv.ParamValues(ctx, name, args)
	if !ok {
		return nil // not a tool mcpx lists (mcpx lists none whose annotations are invalid)
	}
	for _, v := range values {
		raw, inHeader := HeaderValue(hdr, v.Header)
		if !inHeader {
			if v.Set {
				return headerMismatch("missing %s header (want the argument's value %s)", v.Header, Quote(v.Value))
			}
			continue
		}
		got, err := DecodeHeaderValue(raw)
		switch {
		case err != nil:
			return headerMismatch("malformed %s header: %v", v.Header, err)
		case !v.Set:
			return headerMismatch("%s header %s, but the arguments give no value", v.Header, Quote(got))
		case got != v.Value:
			return headerMismatch("%s header %s does not match the argument's value %s", v.Header, Quote(got), Quote(v.Value))
		}
	}
	return nil
}
