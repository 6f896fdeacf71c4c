// Package relay is the life of one relayed call: the registry of in-flight
// host requests, the fresh upstream request id and progress token of each
// call (minted by the upstream connection), progress restored to the host's
// token in wire order, the idle timer that progress resets and the hard
// maximum that nothing extends, and one context.Cause per end that becomes
// the upstream's cancellation reason.
//
// Limits: each upstream has MaxConcurrentCalls call slots; a call beyond
// them waits in a bounded FIFO queue, for at most the queue timeout, and
// fails at once (a *BusyError) when the queue is full or the timeout runs
// out. The hard maximum counts that wait, the idle timer does not. A host
// connection has at most MaxCallsPerHost requests registered at once
// (Registry.AddLimited, a *HostLimitError beyond). Both read the current
// config, so a reload applies to new calls.
//
// During a call, what the upstream asks of a host (elicitation, sampling,
// roots) goes to the call's Asker, if its host declared the capability,
// and the answer back to the upstream; the idle timer is paused while a
// question waits. When the call ends or is cancelled, its questions still
// waiting are withdrawn from the host (after the upstream's cancel) and
// answered upstream with an error; an upstream that withdraws its own
// question has it withdrawn from the host.
//
// Across eras (docs/protocol-notes.md §7.5): a 2026-07-28 upstream's
// input_required goes to a 2026-07-28 host as it is, and for a legacy host
// becomes host requests, then a retry upstream (new id, inputResponses,
// the upstream's requestState byte for byte), round after round. A
// legacy upstream's question to a 2026-07-28 host holds the upstream call
// and answers the host input_required with a requestState sealed by
// AES-GCM (host principal, server, tool, arguments digest, expiry, a
// single-use hold id); the retry resumes the held call, and a host that
// never retries has it cancelled after mcpx.inputTimeout. Only what the
// host declared, per request, is ever put to it.
//
// Host timers: each call carries its host's profile (package
// hostprofile; Relay.HostProfile applies the config's mcpx.hosts) and when
// the host sent it (Call.HostSince); Call.HostDeadline says when a timer
// nothing resets fires. Behind a host whose timer progress resets and that
// gave a progress token, a call whose upstream is silent sends the host
// heartbeats, progress under its token every third of its timer, never
// after CallTool returns and never resetting the call's own idle timer
// (heartbeat.go).
//
// Every host request that may wait is registered before it is handled, by
// the goroutine that reads the host's messages, so that a cancellation read
// after it always finds it. Nothing else in the daemon tracks host ids;
// only the host's stdio link (package hoststream) keeps a ledger of its
// own, for the requests a daemon that dies leaves unanswered.
//
// An Observer (metrics, the live view) is told of each tool call's start,
// progress, queue wait and end with its outcome, and a Tracer makes a
// span of it whose W3C trace context goes upstream in _meta (observe.go,
// trace.go); with neither, and no debug log, a call pays one branch.
//
// Concurrency: Registry and Relay are safe for concurrent use.
package relay
