// Package supervise runs child processes that must not outlive mcpx: each
// in a process group of its own (in mcpx's session), with its
// stdin, stdout and stderr as pipes, stopped as the MCP stdio shutdown
// says (close stdin, wait, SIGTERM, wait, SIGKILL).
//
// [Start] spawns one child, directly or under the shim: the mcpx
// executable re-run as `mcpx shim ...` ([ShimVerb], [RunShim]; see
// shim.go), which kills the child's whole tree when mcpx ends, however it
// ends. With [Options.Records] each live child is recorded in a
// directory, and [Reap] kills what a dead mcpx left behind.
//
// Concurrency: a [Process] is waited for by one goroutine that Start
// owns, locked to its OS thread until the child is reaped (so that the
// parent-death signal fires only when mcpx dies); its methods are safe
// for concurrent use. The caller owns the read ends Stdout and Stderr and
// closes them; Stop closes Stdin.
//
// The package knows nothing of MCP: upstream builds its stdio transport
// on it, sandbox starts its script children with it, and cmd/mcpx runs
// the shim.
package supervise
