// Package conformfixture is the conformance fixture upstream: an MCP server
// that implements the "Server Implementation Requirements" of every server
// scenario of the official conformance suite installed in test/interop
// (@modelcontextprotocol/conformance 0.1.16 and 0.2.0-alpha.12), so that
// the suite can grade it directly and then grade mcpx fronting it with the
// same names.
//
// It is built on the official go-sdk (a test fixture, not mcpx's data
// path): [New] returns one *mcp.Server; [ServeStdio] serves it on
// newline-delimited JSON-RPC, [Handler] on Streamable HTTP (legacy
// sessions with resumable SSE streams, and stateless 2026-07-28 requests
// on the same endpoint). Both speak the legacy revisions and 2026-07-28.
//
// Contracts:
//
//   - Names are those the scenarios call: tools test_* (text, image, audio,
//     embedded resource, mixed content, logging, progress, error, sampling,
//     elicitation with its SEP-1034 and SEP-1330 variants, reconnection,
//     JSON Schema 2020-12, the input_required tools of SEP-2322 and the
//     2026-07-28 diagnostic tools test_missing_capability,
//     test_streaming_elicitation, test_logging_tool,
//     test_trigger_tool_change, test_trigger_prompt_change, and the plain
//     tools the tasks extension's scenarios name: greet, slow_compute,
//     failing_job, protocol_error_job, confirm_delete, multi_input,
//     test_tool_with_task, which a gateway in front makes tasks), prompts
//     test_*, resources test://static-text, test://static-binary,
//     test://watched-resource and the template test://template/{id}/data,
//     completion for prompt and template arguments, logging.
//   - Results are the exact texts the scenarios check.
//   - requestState of the input_required tools is HMAC-signed with a key
//     made per [New]: a tampered state gets -32602.
//   - [Fixture.ServeStdio] returns when its input ends or its context is
//     done. [Fixture.Handler]'s legacy sessions (the go-sdk's) live until
//     the client ends them with DELETE or the process exits: the fixture
//     is for tests and short runs, not a long-lived server.
//   - A sampling or elicitation tool called at 2026-07-28 answers
//     input_required and its retry with the result; before that revision
//     it sends the request to the client.
package conformfixture
