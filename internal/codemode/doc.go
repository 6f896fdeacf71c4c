// Package codemode runs a model's script against the tools behind mcpx:
// the script API (tools.<server>.<tool>, mcpx.call, mcpx.search,
// progress, sleep, setTimeout, console), each inner call a relayed call
// that the script owns, and the TypeScript declarations a model reads to
// write correct calls.
//
// A script runs in a sandbox child ([sandbox.Pool]); every call it makes
// goes through the relay with the call's own timers and the server's
// limits. A script ends when it returns or fails, when its caller gives
// up (a host's cancel, Ctrl-C), when it has shown no activity for the idle
// timeout (an inner call's progress, a call starting or ending, progress
// or console output are activity), or at its hard maximum. However it
// ends, the script is interrupted (its process killed if it does not stop)
// and every inner call still in flight is cancelled upstream with a
// *StopError that names the script and why.
//
// Concurrency: an Engine is safe for concurrent use; Exec returns only
// after the script's process and every inner call have ended.
package codemode
