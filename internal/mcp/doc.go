// Package mcp holds what mcpx needs to know of the Model Context Protocol:
// the protocol revisions and how to tell them apart, method names, the
// _meta keys, error codes, and the few message shapes mcpx acts on itself
// (initialize, server/discover, progress, cancellation). Everything else
// passes through as raw JSON.
//
// It has no state; all functions are safe for concurrent use.
package mcp
