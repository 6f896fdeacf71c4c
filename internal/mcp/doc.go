// Package mcp holds what mcpx needs to know of the Model Context Protocol:
// the protocol revisions and how to tell them apart, and its vocabulary:
// every method name, _meta key, extension name, result type and task
// status mcpx names (no other package spells one in a string literal or
// in JSON text: TestVocabularyHasOneHome), error codes, and the few message
// shapes mcpx acts on itself (initialize, server/discover, progress,
// cancellation). Everything else passes through as raw JSON. The
// vocabulary is written by hand, not generated from the schema: mcpx
// keeps messages as raw JSON and needs the names, not the types.
//
// Initializing it hands jsonrpc the names every call carries, to decode
// without allocating ([Interned]). It has no other state; all functions
// are safe for concurrent use.
package mcp
