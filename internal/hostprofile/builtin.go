package hostprofile

import (
	"maps"
	"slices"
	"time"
)

// builtin holds the timers of the hosts people use, by the clientInfo.name
// each sends. Each entry names the source it was taken from; where the
// host's source is public, the entry was checked against it. Name and
// Source are filled in by Lookup.
var builtin = map[string]Profile{
	// Claude Code (npm @anthropic-ai/claude-code; its JS ships in the
	// package, measured with 2.1.328): an idle timer that progress
	// resets, CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT, 5 min for servers over
	// HTTP and 30 min on stdio; the shorter is the one assumed. A call
	// also moves to a client-side background call after 2 min
	// (CLAUDE_CODE_MCP_AUTO_BACKGROUND_MS), which does not survive the
	// session; that is not a timer, and is not modelled here.
	"claude-code": {Timeout: 5 * time.Minute, ResetOnProgress: true},

	// Claude Desktop (clientInfo "claude-ai"; closed source): about 60 s,
	// not configurable, progress ignored (anthropics/claude-code#22542,
	// #58687).
	"claude-ai": {Timeout: 60 * time.Second},

	// Codex (openai/codex codex-rs/codex-mcp/src/rmcp_client.rs,
	// DEFAULT_TOOL_TIMEOUT = 300 s, per-server tool_timeout_sec; older
	// releases used 60 s in codex-rs/core/src/mcp_connection_manager.rs).
	// No reset on progress in its client.
	"codex-mcp-client": {Timeout: 300 * time.Second},

	// Gemini CLI (google-gemini/gemini-cli
	// packages/core/src/tools/mcp-client.ts: MCP_DEFAULT_TIMEOUT_MSEC =
	// 10 min, passed as the SDK's timeout with no resetTimeoutOnProgress;
	// it sends a progress token all the same).
	"gemini-cli-mcp-client": {Timeout: 10 * time.Minute},

	// opencode (anomalyco/opencode): v1 and v2 both send "opencode". v1
	// (packages/opencode/src/mcp/catalog.ts) calls with
	// resetTimeoutOnProgress and a progress hook, under the server's
	// timeout or the SDK's 60 s; v2 (packages/core/src/mcp/client.ts)
	// has a hard 12 h DEFAULT_EXECUTION_TIMEOUT. The shorter, v1's, is
	// assumed; under v2 its heartbeats are harmless.
	"opencode": {Timeout: 60 * time.Second, ResetOnProgress: true},

	// VS Code (microsoft/vscode
	// src/vs/workbench/contrib/mcp/common/mcpServerRequestHandler.ts:
	// clientInfo.name is productService.nameLong): no timer on a tool
	// call, only the user's cancellation (microsoft/vscode#308961).
	"Visual Studio Code":            {},
	"Visual Studio Code - Insiders": {},

	// Cursor ("cursor-vscode"; closed source): its timer is not known;
	// it gets the default's.
	"cursor-vscode": {Timeout: DefaultTimeout},

	// Windsurf ("windsurf-client"; closed source): its timer is not
	// known; it gets the default's.
	"windsurf-client": {Timeout: DefaultTimeout},

	// The MCP Inspector's CLI (modelcontextprotocol/inspector, clientInfo
	// "inspector-cli"): it calls through the TypeScript SDK without a
	// progress token; the SDK's default applies.
	"inspector-cli": {Timeout: DefaultTimeout},
}

// builtinOrder is builtin's names, sorted.
var builtinOrder = slices.Sorted(maps.Keys(builtin))
