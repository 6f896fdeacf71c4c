package hostserver

import (
	"mcpx/internal/hostjobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/relay"
)

// end finishes a request that failed: nothing for a host that cancelled or
// left, the upstream's own error as it was, or an mcpx error.
func (hs *hostSession) end(req *request, err error) {
	if c, ok := relay.CauseOf(err); ok && !c.Answered() {
		return
	}
	fail(req.sink, req.msg.ID, callError(err, req.server))
}

func callError(err error, server string) *jsonrpc.Error {
	e, _ := relay.RPCError(err, server)
	return e
}

// toolError is a tool result reporting a failure to the model.
func toolError(text string) any { return hostjobs.ToolError(text) }
