// Package hosthttp is the HTTP side of mcpx's face toward MCP hosts: who
// may use a listener, decided once per request at the face, before any
// MCP message is read, and the wire of Streamable HTTP that knows no
// session (wire.go: its headers, what Accept allows, an error answered
// as a JSON-RPC body, a single message as JSON or one SSE event, the
// status of a 2026-07-28 error response). hostserver serves Streamable
// HTTP on it (its Handler takes an [Access]); the daemon builds an Access per listener and
// guards what else a listener serves (the local API's /v1, the metrics
// page, the live view) with the same checks ([Access.Check],
// [Access.Guard], [Access.CheckBrowser]), and serves the protected
// resource metadata of people's sign-in ([People.Metadata]).
//
// The checks, in order: the Host header must name the listener (DNS
// rebinding protection), a browser's Origin must be this machine or the
// listener itself, then a bearer token must open it: one of mcpx's own
// ([Tokens]; a named token is a principal of its own), or a person's
// access token ([People], an OAuth 2.1 protected resource). The unix
// socket ([Access] with no Addr) checks its peers itself and serves no
// browser. A refusal is a status, a reason that never quotes the token,
// and for a 401 (or a 403 for a missing scope) the WWW-Authenticate
// challenge to send ([Verdict]).
//
// Contract: an Access is a value, safe for concurrent use when its Tokens
// and People are; the package starts no goroutine and owns nothing to
// close. [Access.Decide] may block on a token check: a store shared by
// replicas, or a person's token verified with its issuer under the
// request's context. A request that passes trusts its connection (sock.Trust) in
// Check and Guard; Decide alone leaves that to its caller. hosthttp
// never imports hostserver: the host sessions build on it.
package hosthttp
