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
// mapped outside the heap (rest.go) and copies a line within the limit
// once; a quiet second after a burst of long lines (on any reader) the
// mappings are unmapped and, after a line of a MiB or more, the heap's
// free pages returned to the system (giveback.go).
package jsonrpc
