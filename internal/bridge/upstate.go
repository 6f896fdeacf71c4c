package bridge

import (
	"context"
	"encoding/json"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/relay"
)

// A 2026-07-28 upstream's requestState passes through mcpx to a
// 2026-07-28 host, which hands it back on its retry. As it came, it would
// resume the round for whoever presents it; so mcpx wraps it in a seal
// of its own, bound as the state mcpx makes is (the host's principal, the
// server, the tool and its arguments, an expiry), and unwraps it for the
// upstream on the retry, byte for byte. A state a host presents that mcpx
// did not seal is refused.

// sealUpstreamState returns res with an input_required result's
// requestState sealed for c's host; any other result as it is.
func (b *Bridge) sealUpstreamState(c *relay.Call, res json.RawMessage) json.RawMessage {
	ir, ok := inputRequired(res)
	if !ok || ir.state == nil {
		return res
	}
	obj, err := jsonrpc.ParseObject(res)
	if err != nil {
		return res
	}
	args, _ := c.Params.Get("arguments")
	state := b.sealer.Load().seal(holdState{Up: ir.state, Principal: c.Principal, Server: c.Server, Tool: c.Tool,
		Digest: requestDigest(c.Server, c.Tool, args), Expires: time.Now().Add(b.inputTimeout()).UnixMilli()})
	obj.Set("requestState", jsonrpc.Quote(state))
	return obj.Bytes()
}

// resumeUpstream retries c upstream with the upstream's own requestState
// that st (opened) carries in place of the host's sealed one.
func (b *Bridge) resumeUpstream(ctx context.Context, e *relay.Entry, c relay.Call, st holdState) (json.RawMessage, error) {
	c.Params.Set("requestState", st.Up)
	c.Resume = nil
	return b.call(ctx, e, c, false)
}
