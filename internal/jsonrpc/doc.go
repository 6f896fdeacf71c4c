// Package jsonrpc holds JSON-RPC 2.0 messages as mcpx relays them: envelopes
// decoded just enough to route, with ids, params and results kept as the exact
// bytes the peer sent. It also frames messages on newline-delimited streams
// with a size limit, and edits JSON objects member by member without touching
// the bytes of the members it does not change.
//
// The package knows nothing of MCP: the names of the protocol above that
// it decodes without allocating are handed to it ([Intern]).
//
// Concurrency: [Message] and [Object] values are not safe for concurrent
// mutation. A [Reader] is used by one goroutine; a [Writer] is safe for
// concurrent use.
//
// Memory: a [Reader] reads a long line past its first 64 KiB into memory
// mapped for that line (rest.go), unmapped before ReadLine returns, and
// copies a line within the limit once; a second after the last line of a
// MiB or more it let go (on any reader), the process returns its free heap
// pages to the system (giveback.go).
package jsonrpc
