package hostserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"mcpx/internal/hosthttp"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/outq"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
)

// The host sessions over Streamable HTTP. The transport (package
// hosthttp) routes each POST and GET to a session, and the session's
// messages to their response stream; the sessions are hostserver's own,
// the same as a stream connection's: httpFace is what the transport asks
// of them (hosthttp.Sessions), a hostSession is one (hosthttp.Session),
// and a request's response stream is its sink (httpSink).

// HTTP returns the Streamable HTTP face of s. Serve it through its
// Handler, once per listener; opts' Logger is s's.
func (s *Server) HTTP(opts *hosthttp.Options) *hosthttp.Server {
	var o hosthttp.Options
	if opts != nil {
		o = *opts
	}
	o.Logger = s.log
	h := hosthttp.New(&httpFace{srv: s, workers: newWorkers()}, &o)
	s.hostsMu.Lock()
	s.faces = append(s.faces, h)
	s.hostsMu.Unlock()
	return h
}

// httpFace is the host sessions of one HTTP face.
type httpFace struct {
	srv     *Server
	workers *workers // the handler goroutines of its 2026-07-28 requests
}

func (f *httpFace) New(who principal.Principal, stateless bool) hosthttp.Session {
	hs := &hostSession{
		srv:  f.srv,
		id:   "http-" + strconv.FormatUint(f.srv.nextID.Add(1), 10),
		base: context.Background(), // the face's Close ends its requests, through the registry
		who:  who,
	}
	if stateless {
		hs.stateless = true
		hs.shared = f.workers
	}
	return hs
}

func (f *httpFace) NewQueue() *outq.Queue { return newHostQueue(nil, nil) }

// modernMethods are the methods mcpx serves to 2026-07-28 hosts, beside
// the surface's. subscriptions/listen carries the tools.listChanged that
// server/discover advertises: its response stream stays open until the
// host closes it.
var modernMethods = map[string]bool{mcp.MethodDiscover: true, mcp.MethodToolsList: true, mcp.MethodToolsCall: true,
	mcp.MethodSubscriptionsListen: true, mcp.MethodTasksGet: true, mcp.MethodTasksUpdate: true, mcp.MethodTasksCancel: true}

func (f *httpFace) Knows(method string) bool { return modernMethods[method] || isSurface(method, true) }

func (f *httpFace) Served(method string) bool {
	return !isSurface(method, true) || f.srv.surfaceServed(method) // surfacehost.go
}

func (f *httpFace) ParamValues(ctx context.Context, tool string, args json.RawMessage) ([]hosthttp.ParamValue, bool) {
	annotations, ok := f.srv.catalog.ParamHeaders(ctx, tool)
	if !ok {
		return nil, false
	}
	values, err := annotations.Values(args)
	if err != nil || len(values) == 0 {
		return nil, err == nil
	}
	out := make([]hosthttp.ParamValue, len(values))
	for i, v := range values {
		out[i] = hosthttp.ParamValue{Header: v.Header, Value: v.Value, Set: v.Set}
	}
	return out, true
}

func (f *httpFace) MaxMessageBytes() int { return f.srv.maxMessageBytes() }

func (f *httpFace) Stopping() *jsonrpc.Error {
	return callError(&relay.Cause{Kind: relay.Stopping}, "")
}

func (f *httpFace) Refused(ctx context.Context, level slog.Level, key, msg string, args ...any) {
	f.srv.refused.Log(ctx, level, key, msg, args...)
}

// Close ends the shared workers once no session can hand them a request.
func (f *httpFace) Close() { f.workers.close() }

func (s *Server) maxMessageBytes() int {
	if s.opts.MaxMessageBytes > 0 {
		return s.opts.MaxMessageBytes
	}
	return 16 << 20
}

// A hostSession is a hosthttp.Session.

func (hs *hostSession) ID() string { return hs.id }

func (hs *hostSession) Describe() (principal, version, client string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.principal(), hs.version, hs.clientName
}

func (hs *hostSession) KeepSubject(r *http.Request) { hs.keepSubject(r) }

func (hs *hostSession) Initialize(msg *jsonrpc.Message) []byte {
	out := &captureSink{}
	hs.routeRequest(msg, out)
	return out.line
}

func (hs *hostSession) Request(msg *jsonrpc.Message, out *hosthttp.Stream) {
	hs.routeRequest(msg, httpSink{out})
}

func (hs *hostSession) Notify(msg *jsonrpc.Message) { hs.notification(msg) }

func (hs *hostSession) Answer(msg *jsonrpc.Message) { hs.answer(msg) }

func (hs *hostSession) Watch(out *hosthttp.Stream) {
	if out == nil {
		hs.srv.watchLegacy(hs, nil)
		return
	}
	hs.srv.watchLegacy(hs, httpSink{out})
}

func (hs *hostSession) CancelRequest(id jsonrpc.ID) {
	hs.srv.relay.Registry().CancelHost(relay.HostKey{Session: hs.id, ID: id.String()},
		&relay.Cause{Kind: relay.HostCancelled, Detail: "it closed the request's response stream"})
}

func (hs *hostSession) End(why hosthttp.Ending) (int, error) {
	cause := &relay.Cause{Kind: relay.Stopping}
	switch why {
	case hosthttp.EndIdle:
		cause = &relay.Cause{Kind: relay.HostDisconnected}
	case hosthttp.EndDeleted:
		cause = &relay.Cause{Kind: relay.HostCancelled, Detail: "it ended its session (HTTP DELETE)"}
	}
	hs.setClosing()
	return hs.srv.relay.Registry().CancelSession(hs.id, cause), cause
}

func (hs *hostSession) Close() {
	hs.setClosing()
	hs.handlers.Wait()
}

func (hs *hostSession) Leave() { hs.srv.leaveSurface(hs) }

// httpSink is a request's response stream, or a legacy session's GET
// stream, as the session's sink: one pointer, so that making a sink of
// it allocates nothing.
type httpSink struct{ s *hosthttp.Stream }

func (h httpSink) pushWhile(live func() bool, line []byte) { h.s.PushWhile(live, line) }

func (h httpSink) pushProgressWhile(live func() bool, key string, line []byte) {
	h.s.PushKeyed(live, key, line)
}

func (h httpSink) finish()                      { h.s.Finish() }
func (h httpSink) queue() *outq.Queue           { return h.s.Queue() }
func (h httpSink) carriesRequests() bool        { return h.s.AcceptsSSE() }
func (h httpSink) hostContext() context.Context { return h.s.HostContext() }

// captureSink keeps the one message of a request answered at once
// (initialize).
type captureSink struct{ line []byte }

func (c *captureSink) pushWhile(live func() bool, line []byte) {
	if live == nil || live() {
		c.line = line
	}
}
func (c *captureSink) pushProgressWhile(func() bool, string, []byte) {}
func (c *captureSink) finish()                                       {}
func (c *captureSink) queue() *outq.Queue                            { return nil }
func (c *captureSink) carriesRequests() bool                         { return true }
func (c *captureSink) hostContext() context.Context                  { return nil }
