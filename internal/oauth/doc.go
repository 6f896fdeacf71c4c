// Package oauth is mcpx's side of MCP authorization toward upstream HTTP
// servers: mcpx as an OAuth 2.1 client of a protected MCP server.
//
// It discovers the server's authorization server (RFC 9728 protected
// resource metadata, then RFC 8414 or OpenID Connect discovery), obtains a
// client id (a pre-registered one from the config, a client ID metadata
// document, or RFC 7591 dynamic registration), runs the authorization code
// flow with PKCE (S256), the RFC 8707 resource parameter in both the
// authorization and the token request, and the state and RFC 9207 iss
// checks, receiving the redirect on a loopback port; it stores the tokens
// (one 0600 file per server), refreshes them, and revokes them (RFC 7009).
// golang.org/x/oauth2 does the code exchange and the refresh.
//
// [Transport] is the HTTP round tripper of one configured server: it puts
// that server's access token on requests to that server's origin only,
// refreshes the token before it expires and once on a 401, and turns a
// refusal it cannot fix into a [SignInError]. With an [Interactive]
// sign-in it instead runs the authorization flow itself, step-up on
// insufficient_scope included (bounded).
//
// Concurrency: a [Store] and a [Transport] are safe for concurrent use; a
// refresh holds the server's token file lock, so processes sharing the
// state directory refresh one at a time and reuse each other's result.
// Nothing here starts a goroutine that outlives the call that started it.
package oauth
