// Package demo is mcpx's bundled MCP server: the upstream that `mcpx demo`
// runs for the README's first command, and the fixture every integration
// test talks to. It speaks newline-delimited JSON-RPC on raw JSON (no SDK),
// so what it sends and what it saw are exact and observable.
//
// Contracts:
//
//   - Eras. With [Options.Era] "auto" one process serves both eras: an
//     initialize request is answered with a negotiated legacy revision
//     (2024-11-05 up to [Options.MaxVersion]), and any request whose
//     params._meta carries "io.modelcontextprotocol/protocolVersion" is
//     served statelessly as 2026-07-28: an unsupported version gets -32022
//     with data {supported, requested}, a missing clientCapabilities -32602,
//     and every result carries "resultType":"complete". server/discover is
//     answered unless the era is "legacy" (-32601) or
//     [Options.IgnoreDiscover] is set (no reply at all).
//   - Requests run concurrently, one goroutine each. Notifications never get
//     replies; a malformed line gets -32700 with id null and the server keeps
//     reading; an unknown method gets -32601.
//   - Progress goes out only for a request that carried
//     params._meta.progressToken, under that token's exact JSON bytes, with
//     strictly increasing values, and never after the request's response.
//   - notifications/cancelled matches the request whose raw id text equals
//     requestId. A cancelled request gets no response and no more progress,
//     except the stubborn tool and initialize, which ignore cancellation on
//     purpose. Every cancellation is recorded (see [Event]), known or not.
//   - [Serve] owns every goroutine it starts: at the end of its input, or
//     when its context is cancelled, it cancels every running request and
//     returns once all of them have ended.
//   - Over HTTP ([ServeHTTP], `mcpx demo -http ADDR`) the same requests
//     are served on one endpoint, /mcp, each POST classified by era: legacy
//     sessions (Mcp-Session-Id minted by initialize; 400 without it, 404
//     once ended by DELETE, which cancels what runs in it; SSE event ids,
//     resumption by GET with Last-Event-ID; a standalone GET stream) and
//     stateless 2026-07-28 requests (headers checked against the body:
//     -32020, -32022, 404 + -32601; closing the response stream cancels the
//     request, recorded with [ReasonStreamClosed]). A request is answered
//     with SSE when it carries a progress token, else with JSON. A
//     legacy client that merely disconnects has not cancelled: the request
//     runs on and its stream can be resumed. Every record names its
//     session and the MCP headers it came with; the wire log adds "H "
//     lines for those headers.
//
// The tools (export, scan, stubborn, wait, cancellations, echo, burst, raw,
// crash, garbage, fail, sleep_then, ask, which asks the client things
// during a call, ask_later, which works silently and then asks, and gated,
// which needs a URL-mode elicitation completed first, -32042 until then;
// over HTTP also region_echo and bad_header_tool, for x-mcp-header) are
// listed by tools/list with their arguments and defaults; durations are
// seconds, as JSON numbers.
//
// With [Options.Surface] (-surface) it also serves resources (with
// subscriptions and list changes), a resource template, prompts,
// completion and logging, and the tools log and touch that emit log
// messages, resource updates and list changes on demand (surface.go).
package demo
