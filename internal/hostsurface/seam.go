package hostsurface

import (
	"encoding/json"
	"log/slog"

	"mcpx/internal/catalog"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/relay"
)

// Surface is the surface of every host session of one face: the
// subscriptions, log levels and list-change watchers they share. A zero
// Surface keeps those; Init gives it the upstreams it serves from.
type Surface struct {
	relay   *relay.Relay
	catalog *catalog.Catalog
	log     *slog.Logger
	info    json.RawMessage // mcpx's serverInfo, for 2026-07-28 results
	watch   watchers
	subs    subscriptions
	logs    logLevels
}

// Init makes s the surface of the hosts served through r and c; info is
// mcpx's serverInfo. Call it once, before s serves a host.
func (s *Surface) Init(r *relay.Relay, c *catalog.Catalog, log *slog.Logger, info json.RawMessage) {
	s.relay, s.catalog, s.log, s.info = r, c, log, info
}

// Host is a host session as the surface sees it. Its pointer is its
// identity: the key of its subscriptions, its log level and its stream.
// The methods that take a Request are given only the session's own.
type Host interface {
	// ID names the session in log lines.
	ID() string
	// SessionKey names the host to the pool (a perHost server's
	// upstream sessions of its own).
	SessionKey() string
	// Person is who the session's requests come from, as its face
	// decided (principal.Principal.ID).
	Person() string
	// MayUse reports whether the host of a legacy session may use
	// server, by the clientInfo.name of its initialize.
	MayUse(server string) bool
	// Visible is the host's decision for r of the servers whose surface
	// it gets, as the catalog takes it (nil: every server).
	Visible(r Request) func(server string) bool
	// UpstreamCaps are the host's capabilities for r as an upstream is
	// told them.
	UpstreamCaps(r Request) json.RawMessage
	// EndRequest finishes r, which failed with err: nothing for a host
	// that cancelled or left, else the error.
	EndRequest(r Request, err error)
}

// Request is one host request of the surface's, admitted and running on
// its handler goroutine.
type Request interface {
	Message() *jsonrpc.Message
	// Params are the request's params, parsed; the caller must not edit
	// them.
	Params() *jsonrpc.Object
	// HostMeta is the host's params._meta; the caller must not edit it.
	HostMeta() *jsonrpc.Object
	Modern() bool // of a 2026-07-28 host
	Version() string
	// Entry is the request's entry in the relay's registry.
	Entry() *relay.Entry
	// SetServer names the upstream the request went to, once known.
	SetServer(server string)
	// Push queues a message of the request's on its stream while live
	// (nil: always) reports true.
	Push(live func() bool, line []byte)
	// Answer queues the request's final message, as Push does.
	Answer(live func() bool, line []byte)
	// Result adapts a result to the request's era, with serverInfo for
	// a 2026-07-28 host.
	Result(raw, serverInfo json.RawMessage) json.RawMessage
	// JobLine sends a notification of the request's call to the host
	// of the job the call became, and reports whether it is one.
	JobLine(line []byte) bool
}

// Stream is a legacy session's stream outside its requests (its stdio
// connection, or an HTTP session's GET stream): Notify queues a
// notification on it and never blocks.
type Stream interface {
	Notify(line []byte)
}

func reply(r Request, result json.RawMessage) {
	r.Answer(nil, jsonrpc.NewResult(r.Message().ID, result).Encode())
}

func fail(r Request, err *jsonrpc.Error) {
	r.Answer(nil, jsonrpc.NewError(r.Message().ID, err).Encode())
}

func jsonString(s string) string { return string(jsonrpc.MustMarshal(s)) }
