// Package sandbox runs one untrusted script in a child process of the mcpx
// executable: an embedded JavaScript interpreter (goja) with TypeScript
// types stripped by esbuild, under limits, with no ambient authority. It
// knows nothing of MCP: what a script may ask of the world goes through a
// [Host] that the caller supplies.
//
// The child is the mcpx executable re-run with [ChildVerb] as its first
// argument (cmd/mcpx hands the rest to [RunChild]); it speaks JSON lines
// on its stdin and stdout with the parent (proto.go) and runs exactly one
// script, then exits: no state of one script is ever seen by another. A
// [Pool] keeps a few children started and idle, so that a script does not
// wait for a process to start.
//
// Inside the child a script sees the ECMAScript built-ins, console (its
// lines captured and bounded), setTimeout, clearTimeout and sleep(ms), and
// whatever the caller's prelude builds on the host bridge it is given.
// There is no require, import, fetch, process, filesystem, network or
// environment (the child starts with an empty one, in /, but for
// GOMAXPROCS and the tag supervise marks its children with). The child
// runs under package supervise as an upstream does: in a process group of
// its own, killed if mcpx dies.
//
// Limits ([Limits]): memory (the child's Go heap, watched, with the Go
// memory limit set and an RLIMIT_DATA backstop; a child the kernel kills
// reports the memory limit, not a crash), CPU time (watched, with an
// RLIMIT_CPU backstop; a script that the interrupt cannot reach is ended
// by its child, which reports the limit), console output, the size of the
// result, the size of each message to the host (a call past it throws in
// the script; the parent reads no longer line of a child, and stops one
// that sends it), the number of host calls and how many may be in flight
// at once (calls beyond that wait in the child, in order).
//
// Stopping: when the context given to [Pool.Exec] ends, the script is
// interrupted (goja's Interrupt stops even a tight loop), every host call
// still running has its context cancelled, and the child is killed if it
// has not exited within a short grace. When the script ends by itself, its
// host calls still running are cancelled with [Script.EndCause].
//
// Concurrency: a Pool is safe for concurrent use; each Exec owns every
// goroutine it starts and returns only after they have ended. The pool's
// Run owns the warm children, refills them, and reaps each child whose
// script is over, off the script's path; it returns after killing and
// reaping every child left.
package sandbox
