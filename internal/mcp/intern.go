package mcp

import "mcpx/internal/jsonrpc"

// Interned lists the strings every relayed call carries: the member names
// of requests, results and progress, the hot methods and the _meta keys
// and version of a stamped 2026-07-28 request. They are handed to
// jsonrpc's decoder when this package is initialized, so that decoding
// them allocates nothing (BenchmarkDecode in internal/jsonrpc).
var Interned = []string{
	"name", "arguments", "_meta", MetaProgressToken, "progress", "total", "message",
	"content", "structuredContent", "isError", "type", "text", "resultType",
	"requestId", "reason",
	MethodToolsCall, MethodToolsList, MethodProgress, MethodCancelled, MethodInitialized,
	MethodInitialize, MethodPing,
	MetaProtocolVersion, MetaClientInfo, MetaClientCapabilities, MetaLogLevel, MetaServerInfo,
	Version20260728,
}

func init() { jsonrpc.Intern(Interned...) }
