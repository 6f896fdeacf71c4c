// Package upstream runs mcpx's side of each upstream MCP server: it spawns
// stdio servers or connects to HTTP ones (Streamable HTTP in the 2026-07-28
// and the initialize-based revisions, and the 2024-11-05 HTTP+SSE pair),
// speaks JSON-RPC to them on raw bytes, settles the protocol revision
// (server/discover, else initialize; over HTTP by the answers' bodies, cached
// per origin), and keeps one live session per configured server in a [Pool]
// (and, for a perHost server, one more per host that uses it: see
// [Pool.SessionFor]).
//
// A [Conn] owns the upstream's request ids and the progress tokens it mints:
// one per request, always, derived from the id. Progress is delivered on the
// reader goroutine of the stream that carried it (the child's stdout, or the
// HTTP stream of the request), in wire order, before the response that
// follows it on that stream; once a request is answered or forgotten,
// nothing more is delivered for it. The relay builds every timing and
// cancellation policy on these two guarantees.
//
// Requests an upstream sends mcpx (elicitation/create,
// sampling/createMessage, roots/list; mcpx declares all three to legacy
// upstreams) are [Inbound]s, each handed to the [InboundHandler] of the
// mcpx request it belongs to: the one whose legacy HTTP stream carried it;
// else the one whose progress token its _meta names; else the only tool
// call in flight on the session, or of several the oldest whose host can
// answer it, provided no other host's call could (calls of two hosts make
// it ambiguous: the upstream gets an error rather than a host the wrong
// question; a perHost server's hosts each have a session of their own,
// where that cannot arise). Outside any call there is no host to ask (a
// daemon's session serves many), and the upstream gets an error. The upstream's
// notifications/cancelled for its request, or the connection's end,
// cancels the Inbound.
//
// Concurrency: Conn, Session and Pool are safe for concurrent use. The Pool
// owns every process and goroutine it starts; [Pool.Run] returns only after
// all of them have ended.
package upstream
