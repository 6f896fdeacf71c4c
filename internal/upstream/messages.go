package upstream

import (
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// deliverFor returns how to deliver a message that came on request r's own
// HTTP stream: a log message (notifications/message) goes to r's OnMessage
// when it has one, since it belongs to that request (2026-07-28 sends log
// messages only there; a legacy server's there are the request's too);
// everything else as any message on r's stream (a server request there
// belongs to r's call).
func (c *Conn) deliverFor(r *Request) func([]byte) {
	if r == nil {
		return c.deliver
	}
	if r.onMessage == nil {
		return func(data []byte) { c.deliverOn(r, data) }
	}
	return func(data []byte) {
		msg, err := jsonrpc.Decode(data)
		if err != nil {
			c.malformed(msg, data, err)
			return
		}
		if !msg.IsNotification() || msg.Method != mcp.MethodMessage {
			c.dispatch(msg, r)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.forgotten {
			r.onMessage(msg)
		}
	}
}
