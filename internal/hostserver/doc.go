// Package hostserver is mcpx's face toward MCP hosts: on a byte stream
// (stdio, or a daemon connection that carries a host's stdio), and over
// Streamable HTTP ([Server.HTTP]); every protocol revision, the upstream
// tools under their exposed names, the meta-tools mcpx_search and
// mcpx_call, and the host's cancellations. An upstream's elicitation,
// sampling and roots requests reach a legacy host on the stream of the
// call they belong to (the connection, or the call's HTTP response
// stream), under ids of mcpx's own; the host's responses come back as
// messages on the connection, or POSTed in its session.
//
// The rest of the surface is package hostsurface's: the upstreams'
// resources, templates and prompts, completions, resource subscriptions,
// logging and list changes. A session is a hostsurface.Host and a
// request a hostsurface.Request (surfacehost.go); the session decides
// who asks and what its tool filter lets it see, and coalesces list
// changes (repeat.go). Capabilities name each feature only when an
// upstream serves it, so initialize and server/discover wait (bounded)
// for the upstreams to start.
//
// A host is known by the clientInfo.name it sends (initialize for a legacy
// connection or session, each request's _meta in 2026-07-28): each of its
// tool calls runs under that host's profile (Relay.HostProfile), and
// [Server.Hosts] lists the connected hosts with theirs, for status. Its
// tool filter (mcpx.hosts.NAME.tools, found by its named token first)
// decides the tools it sees and calls (toolfilter.go), the servers whose
// surface and name it gets, and which of its principal's jobs and tasks
// it may see (policyfilter.go; policyjobs.go hands who asks to hostjobs
// as a hostjobs.Asking, whose policy decides there); every method dispatch
// answers has its decision in methodpolicy_test.go.
//
// Each stream connection has one reader (the goroutine in
// [Server.ServeConn]), one writer draining an ordered queue, and one
// goroutine per waiting request; ServeConn returns only after all of them
// have ended. Over HTTP the transport is package hosthttp's
// ([Server.HTTP] makes one): it routes each POST to a host session
// (httpface.go: the sessions as hosthttp.Sessions, a hostSession as a
// hosthttp.Session), and each request's messages go to its own response
// stream (a hosthttp.Stream as the request's sink), written by the
// goroutine serving that request. A 2026-07-28 request's handler runs on
// the face's shared workers (workers.go).
//
// A call past its host's timer, a background call or script, and a task
// of either era may become jobs here, on the request's own goroutine
// (jobcall.go): the session makes a hostjobs.Link whose Host is the
// request and its session (jobhost.go), and the link makes the job; the
// link, how the call's and the job's
// questions go to the host that started them, what the host is told of
// them, the tasks' bounds, a task's kept questions, mcpx_job and
// mcpx_job_cancel and the tasks methods (registered in tools.go and
// tasks.go, each given its request as a hostjobs.Request, taskreq.go,
// and who asks as a hostjobs.Asking) are
// package hostjobs', which sees a session only through those two
// interfaces.
package hostserver
