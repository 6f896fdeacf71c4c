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
// A call's life reads straight through Begin (session, hard maximum,
// call slot, idle timer, heartbeats, questions), Live.Round (one request
// upstream and its answer) and Live.End. A Holdable call (a 2026-07-28
// host) is never sent requests: a wait its upstream's question would
// interrupt ends with ErrHold, the request still running. What carries a call across
// revisions (input_required rounds, held calls, sealed requestState, URL
// elicitations, sign-ins, an upstream's tasks) is a Bridge (package
// bridge), which CallTool hands every call; the relay never imports it,
// and without one a call goes upstream once.
//
// Host timers: each call carries its host's profile (package
// hostprofile; Relay.HostProfile applies the config's mcpx.hosts) and when
// the host sent it (Call.HostSince); Call.HostDeadline says when a timer
// nothing resets fires. Behind a host whose timer progress resets and that
// gave a progress token, a call whose upstream is silent sends the host
// heartbeats, progress under its token every third of its timer, never
// after CallTool returns and never resetting the call's own idle timer
// (heartbeat.go). A caller that must act at a moment of its own while the
// call goes on (answer its host before that timer fires) sets
// Call.Deadline and its hook, Call.OnDeadline: the call's own timer calls
// it then, and the relay does nothing else at it. What the caller makes
// of the call is its own: the relay does nothing for jobs and never
// imports package jobs. It knows them only as labels: the job an audit
// record names (Call.Job, or, as the call ends, the hook's AuditJob if
// it is also an AuditNamer), the face of a call with no Who (a stored
// job's run again: audit.FaceJob), and two causes others give a cancel,
// JobCancelled and LeaseLost, whose words (Cause.Error) go upstream as
// its reason.
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
// Concurrency: Registry and Relay are safe for concurrent use; a Live is
// its call's (see Live).
package relay
