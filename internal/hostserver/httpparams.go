package hostserver

import (
	"context"
	"net/http"

	"mcpx/internal/hosthttp"
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
func (h *HTTP) checkParamHeaders(ctx context.Context, hdr http.Header, msg *jsonrpc.Message, params reqParams) *jsonrpc.Error {
	if msg.Method != mcp.MethodToolsCall {
		return nil
	}
	name, ok := params.str("name")
	if !ok {
		return nil
	}
	annotations, ok := h.srv.catalog.ParamHeaders(ctx, name)
	if !ok {
		return nil
	}
	args, _ := params.get("arguments")
	values, err := annotations.Values(args)
	if err != nil {
		return nil // mcpx lists no tool whose annotations are invalid
	}
	for _, v := range values {
		raw, inHeader := hosthttp.HeaderValue(hdr, v.Header)
		if !inHeader {
			if v.Set {
				return headerMismatch("missing %s header (want the argument's value %s)", v.Header, quote(v.Value))
			}
			continue
		}
		got, err := hosthttp.DecodeHeaderValue(raw)
		switch {
		case err != nil:
			return headerMismatch("malformed %s header: %v", v.Header, err)
		case !v.Set:
			return headerMismatch("%s header %s, but the arguments give no value", v.Header, quote(got))
		case got != v.Value:
			return headerMismatch("%s header %s does not match the argument's value %s", v.Header, quote(got), quote(v.Value))
		}
	}
	return nil
}
