// Package hosthttp is mcpx's Streamable HTTP transport toward MCP hosts:
// who may use a listener, decided once per request at the face, before
// any MCP message is read (access.go, people.go); the wire that knows no
// session (wire.go: its headers, what Accept allows, an error answered as
// a JSON-RPC body, a single message as JSON or one SSE event, the status
// of a 2026-07-28 error response); and the transport of the host
// sessions ([Server]): POSTs classified by era and routed to a session
// (request.go), the legacy sessions' ids, idle eviction and DELETE
// (session.go), their standalone GET streams (standalone.go), and each
// request's response stream ([Stream], stream.go). The daemon builds an
// Access per listener, mounts [Server.Handler] with it, and guards what
// else a listener serves (the local API's /v1, the metrics page, the
// live view) with the same checks ([Access.Check], [Access.Guard],
// [Access.CheckBrowser]); it serves the protected resource metadata of
// people's sign-in ([People.Metadata]).
//
// The checks, in order: the Host header must name the listener (DNS
// rebinding protection), a browser's Origin must be this machine or the
// listener itself, then a bearer token must open it: one of mcpx's own
// ([Tokens]; a named token is a principal of its own), or a person's
// access token ([People], an OAuth 2.1 protected resource). The unix
// socket ([Access] with no Addr) checks its peers itself and serves no
// browser. A refusal is a status, a reason that never quotes the token,
// and for a 401 (or a 403 for a missing scope) the WWW-Authenticate
// challenge to send ([Verdict]).
//
// The host sessions are not this package's: they are a [Sessions]
// (hostserver's), which makes a [Session] for a legacy session's
// initialize or for one 2026-07-28 request, and the transport knows them
// by that interface alone, as upstream's sessions know their transports.
// It decides how messages travel; the sessions decide what they mean.
//
// Contract:
//
//   - An Access is a value, safe for concurrent use when its Tokens and
//     People are; [Access.Decide] may block on a token check (a store
//     shared by replicas, or a person's token verified with its issuer
//     under the request's context). A request that passes trusts its
//     connection (sock.Trust) in Check, Guard and [Server.Handler];
//     Decide alone leaves that to its caller.
//   - A [Server] is safe for concurrent use. Beside net/http's request
//     goroutines it starts one per SSE stream (its keep-alive comments,
//     ending with the stream) and one per session that DELETE or
//     eviction ends (that session's Close and Leave, off the caller's
//     time), which [Server.Close] waits for. Each message a session sends
//     is written by the goroutine serving its HTTP request, in order,
//     from the [Stream]'s queue.
//   - A [Stream] is what a session sees of the transport: it pushes on it
//     from any goroutine ([Stream.PushWhile], [Stream.PushKeyed], its
//     [Stream.Queue]) and calls [Stream.Finish] once, after a request's
//     last message; the transport never finishes a request's stream for
//     the session (a host that leaves makes its writes fail: dropped, or
//     a response logged), but finishes a GET stream when the host leaves,
//     the session ends or the Server closes.
//   - Who ends what: a legacy session ends by DELETE or idle eviction:
//     the transport calls [Session.End] (its calls in flight are
//     cancelled), then [Session.Close] (it waits for its handlers) and
//     [Session.Leave]. [Server.Close] calls End and then Close on every
//     session it serves (Leave on none: mcpx is stopping), then
//     [Sessions.Close], and returns once the ended sessions' goroutines
//     have too; the HTTP servers' Shutdown then waits for the response
//     streams. A 2026-07-28 request's session is Closed once its
//     response has been written.
//   - A session gives up a request (its call goes on as a job) by its
//     own accounting, finishing the request's stream then: the transport
//     counts no request's goroutine.
//
// hosthttp never imports hostserver or the core.
package hosthttp
