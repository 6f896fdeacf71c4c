package upstream

import (
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// deliverFor returns how to deliver a message that came on request r's own
// HTTP stream: a log message (notifications/message) goes to r's OnMessage
// when it has one, since it belongs to that request (2026-07-28 sends log
// messages only there; a legacy server's there are the request's too);
// everything else as any message.
func (c *Conn) deliverFor(r *Request) func([]byte) {
	if r == nil || r.onMessage == nil {
		return c.deliver
	}
	return func(data []byte) {
		msg, err := jsonrpc.Decode(data)
		if err != nil || !msg.IsNotification() || msg.Method != mcp.MethodMessage {
			c.deliver(data)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.forgotten {
			r.onMessage(msg)
		}
	}
}
