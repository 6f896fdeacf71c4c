// Package hostserver is mcpx's face toward MCP hosts: on a byte stream
// (stdio, or a daemon connection that carries a host's stdio), and over
// Streamable HTTP ([Server.HTTP]); every protocol revision, the upstream
// tools under their exposed names, the meta-tools mcpx_search and
// mcpx_call, and the host's cancellations. An upstream's elicitation,
// sampling and roots requests reach a legacy host on the stream of the
// call they belong to (the connection, or the call's HTTP response
// stream), under ids of mcpx's own; the host's responses come back as
// messages on the connection, or POSTed in its session.
//
// Each stream connection has one reader (the goroutine in
// [Server.ServeConn]), one writer draining an ordered queue, and one
// goroutine per waiting request; ServeConn returns only after all of them
// have ended. Over HTTP each request's messages go to its own response
// stream, written by the goroutine serving that request.
package hostserver
