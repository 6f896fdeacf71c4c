// Package hostsurface is the surface mcpx serves hosts beyond tools: the
// upstreams' resources, templates and prompts merged and paged with mcpx's
// own cursors (see catalog), reads, prompts and completions routed to
// their upstream and relayed byte for byte but for what the host's
// revision needs (resultType and a read's cache hints for 2026-07-28, the
// legacy -32002 mapped to -32602 there). Resource subscriptions are made
// upstream once per URI and upstream, for legacy sessions with a stream
// and 2026-07-28 listens alike, and undone when the last subscriber
// leaves. Logging: each legacy upstream is set to the most verbose level a
// host asked for, messages on a request's own upstream stream go to that
// request's host, the others to every legacy stream host whose level
// admits them. List changes go to legacy sessions' streams and to the
// subscriptions/listen requests acknowledged for them. [Surface.Features]
// says what the upstreams serve, so that a method is served, and a
// capability advertised, only when one does.
//
// It sees a host session as a [Host] and its request as a [Request], which
// package hostserver implements (pointers: handing them over allocates
// nothing), and never imports it. Who is asking is the session's,
// decided at its face; what the host may see of the upstreams is its tool
// filter's, decided in hostserver and asked through [Host.Visible] and
// [Host.MayUse]; every method here serves only what those allow. A
// legacy session's stream outside its requests is a [Stream], set and
// cleared by [Surface.Watch]. Nothing here blocks an upstream's reader:
// notifications are only queued. Coalescing list changes is the face's
// ([Surface.TellListChanged] tells them at once).
package hostsurface
