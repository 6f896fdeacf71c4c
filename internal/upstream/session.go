package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/supervise"
)

// Session is one live connection to an upstream server: the JSON-RPC
// connection, the transport under it (a child's stdio, or HTTP), and what
// the handshake settled.
type Session struct {
	Server  string
	Started time.Time

	conn  *Conn
	t     transport
	grace time.Duration

	// Settled by the handshake; read-only afterwards.
	version      string
	serverInfo   mcp.Implementation
	capabilities json.RawMessage
	instructions string
	clientInfo   json.RawMessage
	logs         bool // a modern upstream declared logging

	done chan struct{} // closed once the session has ended

	toolsMu sync.Mutex
	tools   []Tool      // nil until listed
	fetch   *toolsFetch // the listing in progress, if any

	wg *sync.WaitGroup // the pool's: counts the session's goroutines

	// onToolsChanged is told when the upstream says its tools changed.
	onToolsChanged func(server string)

	// listening counts mcpx's open subscriptions/listen requests (listen.go,
	// subscribe.go): they are not calls in flight.
	listening atomic.Int32
	// subs counts the resource subscriptions mcpx holds on the session
	// (subscribe.go): while there are any, it is not stopped for being idle.
	subs atomic.Int32

	// onNotify is told of the upstream's other notifications (lists.go).
	onNotify func(server string, msg *jsonrpc.Message)

	lists lists // cached listings other than tools
}

// Version returns the negotiated protocol revision.
func (s *Session) Version() string { return s.version }

// Modern reports whether the session speaks a stateless (2026-07-28+) revision.
func (s *Session) Modern() bool { return mcp.IsModern(s.version) }

// ServerInfo returns what the upstream said of itself.
func (s *Session) ServerInfo() mcp.Implementation { return s.serverInfo }

// Capabilities returns the upstream's capabilities, raw.
func (s *Session) Capabilities() json.RawMessage { return s.capabilities }

// PID returns the upstream's process id, 0 for a remote server.
func (s *Session) PID() int { return s.t.pid() }

// Done is closed when the session has ended.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns why the session ended, nil while it lives.
func (s *Session) Err() error { return s.conn.Err() }

// Pending returns how many requests wait for the upstream's answer (not
// counting mcpx's own subscriptions/listen, which waits for ever).
func (s *Session) Pending() int { return max(s.conn.Pending()-int(s.listening.Load()), 0) }

// StderrTail returns the last lines the upstream wrote to stderr.
func (s *Session) StderrTail() string { return s.t.stderrTail() }

type dialOptions struct {
	onToolsChanged func(server string)
	onNotify       func(server string, msg *jsonrpc.Message)
	log            *slog.Logger
	clientInfo     mcp.Implementation
	maxMessage     int
	probeTimeout   time.Duration
	grace          time.Duration
	era            string      // cached era; "" to probe
	http           *httpShared // the pool's HTTP client and era cache
	person         string      // a per-person server's principal ("": shared)
	sup            *supervise.Options
}

// dial starts srv's process, or connects to its URL, and settles the
// protocol revision. Every goroutine it starts is counted in wg. On
// failure the process or connection is stopped.
func dial(ctx context.Context, srv *config.Server, opts dialOptions, wg *sync.WaitGroup) (*Session, error) {
	s := &Session{
		Server:     srv.Name,
		Started:    time.Now(),
		grace:      opts.grace,
		clientInfo: jsonrpc.MustMarshal(opts.clientInfo),
		done:       make(chan struct{}),
		wg:         wg,

		onToolsChanged: opts.onToolsChanged,
		onNotify:       opts.onNotify,
	}
	var log *slog.Logger
	var err error
	if srv.Transport == config.TransportStdio {
		if log, err = dialStdio(s, srv, opts, wg); err != nil {
			return nil, fmt.Errorf("starting upstream %q: %w", srv.Name, err)
		}
		version := srv.ProtocolVersion
		if version == "" || version == "auto" {
			version = opts.era
		}
		err = s.handshake(ctx, version, opts.probeTimeout)
	} else {
		log, err = dialHTTP(ctx, s, srv, opts, wg)
	}
	if err != nil {
		if s.t != nil {
			s.stop()
		}
		return nil, &StartError{Server: srv.Name, Err: err}
	}
	log.Info("upstream ready", "version", s.version, "serverName", s.serverInfo.Name, "serverVersion", s.serverInfo.Version)
	if kinds := s.listenKinds(); len(kinds) > 0 {
		s.listen(log, kinds)
	}
	return s, nil
}

// StartError is a failed handshake with an upstream. An error the upstream
// answered its handshake with is in its chain, but is no answer to any
// host's request.
type StartError struct {
	Server string
	Err    error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("connecting to upstream %q: %v", e.Server, e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// stop ends the session: waiting calls fail with ErrStopped, then the
// process is stopped gracefully. It returns once the session has ended.
func (s *Session) stop() { s.stopWith(fmt.Errorf("upstream %q: %w", s.Server, ErrStopped)) }

// stopWith is stop, failing waiting calls with why.
func (s *Session) stopWith(why error) {
	s.conn.fail(why)
	s.t.stop(s.grace)
	<-s.done
}

// Start sends a request stamped for this session's revision: on a modern
// session its _meta carries the protocol version, mcpx's client info and
// clientCaps (the capabilities of the host request behind it); on a legacy
// session every io.modelcontextprotocol/ key is removed.
func (s *Session) Start(method string, params *jsonrpc.Object, clientCaps json.RawMessage, opts StartOptions) (*Request, error) {
	if params == nil {
		params = &jsonrpc.Object{}
	}
	mcp.EditMeta(params, func(meta *jsonrpc.Object) {
		level, hasLevel := meta.Get(mcp.MetaLogLevel)
		mcp.DeleteReserved(meta)
		if s.Modern() {
			switch {
			case hasLevel: // the host's, for this request
				meta.Set(mcp.MetaLogLevel, level)
			case opts.LogLevel != "" && s.logs: // a legacy host's, for its session
				meta.Set(mcp.MetaLogLevel, jsonrpc.Quote(opts.LogLevel))
			}
			if clientCaps == nil {
				clientCaps = json.RawMessage("{}")
			}
			meta.Set(mcp.MetaProtocolVersion, quoteVersion(s.version))
			meta.Set(mcp.MetaClientInfo, s.clientInfo)
			meta.Set(mcp.MetaClientCapabilities, clientCaps)
		}
	})
	return s.conn.Start(method, params, opts)
}

// quotedVersions are the revisions mcpx speaks, quoted, so that stamping
// one on a request allocates nothing. They are shared: a value set in an
// Object is never edited in place (and has no spare capacity to append
// into).
var quotedVersions = func() map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(mcp.Versions))
	for _, v := range mcp.Versions {
		m[v] = jsonrpc.Quote(v)
	}
	return m
}()

// quoteVersion returns jsonrpc.Quote(v).
func quoteVersion(v string) json.RawMessage {
	if q, ok := quotedVersions[v]; ok {
		return q
	}
	return jsonrpc.Quote(v)
}

// Cancel stops waiting for r and, if it was still running, tells the
// upstream by its transport's mechanism (notifications/cancelled carrying
// mcpx's own request id and the reason, or the end of the request's own
// HTTP stream). initialize is never cancelled. It reports whether a cancellation
// was sent (over legacy HTTP and HTTP+SSE: is being posted, on a goroutine
// of the transport, so that no caller waits for a slow upstream; a failed
// post is logged).
func (s *Session) Cancel(r *Request, reason string) bool {
	if !s.conn.Forget(r) || r.Method == mcp.MethodInitialize {
		return false
	}
	return s.t.cancel(r, reason)
}

// Call sends a request and waits for its result. If ctx ends first the
// request is cancelled upstream with ctx's cause as the reason.
func (s *Session) Call(ctx context.Context, method string, params *jsonrpc.Object) (json.RawMessage, error) {
	r, err := s.Start(method, params, nil, StartOptions{})
	if err != nil {
		return nil, err
	}
	select {
	case <-r.Done():
		return r.Result()
	case <-ctx.Done():
		s.Cancel(r, context.Cause(ctx).Error())
		return nil, context.Cause(ctx)
	}
}

// notify handles the upstream's notifications other than progress, on the
// reader goroutine. notifications/tools/list_changed drops the cached tool
// list (the next listing asks again) and tells the pool's owner; the other
// list changes drop their cached lists, and every other notification goes
// to the pool's OnNotify.
func (s *Session) notify(msg *jsonrpc.Message) {
	if msg.Method != mcp.MethodToolsListChanged {
		s.dropLists(msg.Method)
		if s.onNotify != nil {
			s.onNotify(s.Server, msg)
		}
		return
	}
	s.dropTools()
}
