package mcp

// mcpx's own error codes: failures that happen in mcpx rather than in an
// upstream. They lie outside JSON-RPC's reserved range and outside the
// codes MCP defines, so no host mistakes them for an upstream's own. Every
// layer names them from here: relay when a call fails, the CLI when its
// link to the daemon breaks under a host's pending request.
const (
	CodeUpstreamFailed = -31000 // the upstream could not start, or died during the call (or the daemon did)
	CodeTimeout        = -31001 // an mcpx timer ended the call
	CodeStopping       = -31002 // mcpx is shutting down
	CodeInterrupted    = -31003 // a person interrupted the call
	CodeBusy           = -31004 // the upstream's call slots and queue left no room
	CodeHostLimit      = -31005 // the host has as many requests in flight as it may
	CodeSignInRequired = -31006 // the upstream needs the user to sign in (mcpx login SERVER)
)
