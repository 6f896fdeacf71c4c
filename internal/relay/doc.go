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
// Every host request that may wait is registered before it is handled, by
// the goroutine that reads the host's messages, so that a cancellation read
// after it always finds it. Nothing outside this package tracks host ids.
//
// Concurrency: Registry and Relay are safe for concurrent use.
package relay
