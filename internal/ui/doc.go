// Package ui is what the daemon shows of itself: Prometheus metrics, the
// live view (a page served by the daemon, updated over server-sent events)
// and the observers that feed both.
//
// Observers, never owners: ui reads the daemon through the same Source
// that answers `mcpx status` and changes nothing but through the
// operations the CLI uses (cancel a call, restart a server). Its
// Observer is told of calls and upstreams by the relay and the pool; it
// keeps counters and a short list of recent cancels and errors, and wakes
// the live view's streams.
//
// The live view is reached by a one-time link (`mcpx ui`) whose token is
// in the URL's fragment: the page trades it, once, for a session key that
// it keeps in sessionStorage and sends in SessionHeader on every request
// for data or action (no cookie: cookies are not bound to a port, so
// another local user's page on another loopback port would get one). The
// page, script and style hold no data and are served to anyone. The daemon
// checks Host and Origin as for its MCP endpoint (CheckRequest); a POST
// must also come from the view's own origin. Its page, script and style
// are embedded in the binary; it fetches nothing else.
//
// Concurrency: Metrics, Live and the handlers are safe for concurrent
// use. Observer methods never block: a live view that is slow to read
// misses intermediate states, never the latest one.
package ui
