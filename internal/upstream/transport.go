package upstream

import (
	"time"

	"mcpx/internal/jsonrpc"
)

// transport carries one session's messages. Each kind of upstream has its
// own: a child process's stdio, Streamable HTTP in the legacy or the
// stateless revision, the 2024-11-05 HTTP+SSE pair. Whatever the
// upstream sends comes back through the session's Conn (deliver), in the
// order it arrived on each stream.
type transport interface {
	// send delivers one message upstream. For a request, r is its pending
	// entry (an HTTP transport reads the answer from the exchange it
	// starts); r is nil for notifications and responses.
	send(r *Request, msg *jsonrpc.Message) error
	// cancel tells the upstream that mcpx gave up on r, the transport's
	// way: notifications/cancelled with mcpx's id and the reason (stdio,
	// legacy HTTP), or ending the request's own stream (2026-07-28 HTTP).
	// It reports whether the upstream was told.
	cancel(r *Request, reason string) bool
	// stop ends the transport gracefully; the session's done channel is
	// closed once it has ended.
	stop(grace time.Duration)
	// pid is the upstream process's id, 0 for a remote server.
	pid() int
	// stderrTail is what a child last wrote to stderr, "" if none.
	stderrTail() string
}

// lineTransport is a transport that sends a request as its encoded line
// alone (stdio): Conn.Start encodes it in one buffer, with no Message.
type lineTransport interface {
	transport
	// sendLine is send for a request encoded as Message.Encode does.
	sendLine(line []byte) error
}
