// Package hostprofile knows each MCP host's tool-call timer: how long a
// host waits for a tools/call result, and whether a progress notification
// restarts that wait. mcpx reads it to keep a call alive behind a host
// that resets its timer on progress (heartbeats, package relay) and to
// hand a call over before a hard timer fires.
//
// A host is recognised by the clientInfo.name it sends (in initialize, or
// in each 2026-07-28 request's _meta). Matching is exact and
// case-sensitive, and independent of the clientInfo.version: a host's
// releases share one profile. A name with no profile gets [Default].
// Built-in profiles (builtin.go) can be overridden, and profiles added, by
// the config (see [Lookup]).
//
// The package is a leaf: the standard library only. It has no state;
// every function is safe for concurrent use.
package hostprofile
