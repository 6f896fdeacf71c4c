// Package hostserver is mcpx's face toward MCP hosts on a byte stream
// (stdio, or a daemon connection that carries a host's stdio): every
// protocol revision on one connection, the upstream tools under their
// exposed names, the meta-tools mcpx_search and mcpx_call, and the host's
// cancellations.
//
// Each connection has one reader (the goroutine in [Server.ServeConn]), one
// writer draining an ordered queue, and one goroutine per waiting request;
// ServeConn returns only after all of them have ended.
package hostserver
