package hostserver

import (
	"context"
	"encoding/json"

	"mcpx/internal/hostsurface"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// The surface (package hostsurface) sees a session as a hostsurface.Host
// and a request as a hostsurface.Request: pointers, so that handing them
// over allocates nothing. Who is asking is the session's, decided at the
// face; what the host may see of the upstreams is its tool filter's
// (toolfilter.go, policyfilter.go), asked through Host.Visible and
// Host.MayUse.

// isSurface reports whether method is the surface's for a host of its
// era.
func isSurface(method string, modern bool) bool { return hostsurface.IsMethod(method, modern) }

func (hs *hostSession) serveSurface(ctx context.Context, req *request) {
	hs.srv.surface.Serve(ctx, hs, req)
}

func (hs *hostSession) subscriptionsListen(ctx context.Context, req *request) {
	hs.srv.surface.Listen(ctx, hs, req)
}

// onMessage returns what receives the log messages an upstream sends on
// req's own stream, and the level to ask a modern upstream for
// (hostsurface.Surface.OnMessage).
func (hs *hostSession) onMessage(req *request, live func() bool) (func(*jsonrpc.Message), string) {
	return hs.srv.surface.OnMessage(hs, req, live)
}

func (s *Server) surfaceServed(method string) bool { return s.surface.Served(method) }

// leaveSurface forgets what a host that has gone asked for (its resource
// subscriptions, its log level), and stops the upstream sessions perHost
// servers ran for it.
func (s *Server) leaveSurface(hs *hostSession) {
	s.surface.Leave(hs)
	s.endHost(hs)
}

// hostStream is a session's sink as the surface's stream of it.
type hostStream struct{ sink }

func (h hostStream) Notify(line []byte) { h.pushWhile(nil, line) }

// watchLegacy makes out the stream that tells legacy session hs what
// mcpx tells it outside its requests; a nil out stops telling it.
func (s *Server) watchLegacy(hs *hostSession, out sink) {
	if out == nil {
		s.surface.Watch(hs, nil)
		return
	}
	s.surface.Watch(hs, hostStream{out})
	hs.streamOpened() // after it is hs's stream (jobhost.go: a job waiting for one hears of it)
}

// streamOf returns the stream of legacy session hs that carries what mcpx
// tells it outside its requests, or nil.
func (s *Server) streamOf(hs *hostSession) sink {
	if out, ok := s.surface.StreamOf(hs).(hostStream); ok {
		return out.sink
	}
	return nil
}

// UpstreamNotified handles an upstream's notifications other than
// progress and tools list changes; the pool calls it from upstream
// readers, and it never blocks (it only queues).
func (s *Server) UpstreamNotified(server string, msg *jsonrpc.Message) {
	switch msg.Method {
	case mcp.MethodResourcesListChanged:
		s.listChanged(mcp.MethodResourcesListChanged, "resourcesListChanged")
	case mcp.MethodPromptsListChanged:
		s.listChanged(mcp.MethodPromptsListChanged, "promptsListChanged")
	default:
		s.surface.Notified(server, msg)
	}
}

// ToolsChanged tells every watching host that the tool list changed. It
// never blocks (it only queues); the pool calls it from upstream readers.
func (s *Server) ToolsChanged() { s.listChanged(mcp.MethodToolsListChanged, "toolsListChanged") }

// listChanged tells every watching host that a list changed. Changes of
// one list within listChangeWindow are told once at its end.
func (s *Server) listChanged(method, kind string) {
	s.lists.do(method, func() { s.surface.TellListChanged(method, kind) })
}

// HostLogMessage delivers a log message of the upstream session a perHost
// server runs for one host (whose hostKey is host) to that host alone. It
// never blocks.
func (s *Server) HostLogMessage(server, host string, msg *jsonrpc.Message) {
	s.surface.HostLogMessage(server, host, msg)
}

// hostSession as a hostsurface.Host (ID is hosthttp.Session's too).

func (hs *hostSession) SessionKey() string        { return hs.sessionKey() }
func (hs *hostSession) Person() string            { return hs.who.ID() }
func (hs *hostSession) MayUse(server string) bool { return hs.mayUse(server) }

func (hs *hostSession) Visible(r hostsurface.Request) func(string) bool {
	return hs.toolFilter(r.(*request)).visible()
}

func (hs *hostSession) UpstreamCaps(r hostsurface.Request) json.RawMessage {
	return hs.upstreamCaps(r.(*request))
}

func (hs *hostSession) EndRequest(r hostsurface.Request, err error) { hs.end(r.(*request), err) }

// request as a hostsurface.Request.

func (req *request) Message() *jsonrpc.Message         { return req.msg }
func (req *request) Params() *jsonrpc.Object           { return req.params }
func (req *request) HostMeta() *jsonrpc.Object         { return req.hostMeta() }
func (req *request) Modern() bool                      { return req.modern }
func (req *request) Version() string                   { return req.version }
func (req *request) Entry() *relay.Entry               { return req.entry }
func (req *request) SetServer(server string)           { req.server = server }
func (req *request) Push(live func() bool, b []byte)   { req.sink.pushWhile(live, b) }
func (req *request) Answer(live func() bool, b []byte) { pushAnswer(req.sink, live, b) }
func (req *request) JobLine(line []byte) bool          { return req.job.Load().jobLine(line) }

func (req *request) Result(raw, serverInfo json.RawMessage) json.RawMessage {
	return req.result(raw, serverInfo)
}
