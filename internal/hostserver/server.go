package hostserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"mcpx/internal/catalog"
	"mcpx/internal/codemode"
	"mcpx/internal/hosthttp"
	"mcpx/internal/hostjobs"
	"mcpx/internal/hostsurface"
	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/outq"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
)

// Options configure a Server; nil means defaults.
type Options struct {
	Logger          *slog.Logger
	Version         string // mcpx's version, shown to hosts
	MaxMessageBytes int
	// DrainTimeout bounds how long a closing connection waits to flush what
	// is queued for a host that stopped reading. Default 2s.
	DrainTimeout time.Duration
	// Jobs keeps the calls that outlive their host's timer, and serves
	// mcpx_job; nil: no jobs, and no job meta-tools.
	Jobs *jobs.Manager
	// Scripts runs mcpx_exec's scripts; nil leaves mcpx_exec and
	// mcpx_describe out.
	Scripts *codemode.Engine
	// TaskMaxTTL bounds the ttl a task is granted (0, or longer than
	// the jobs' retention: the retention); TaskPollInterval is the poll
	// interval tasks suggest (0: hostjobs.DefaultTaskPollInterval).
	TaskMaxTTL       time.Duration
	TaskPollInterval time.Duration
}

// Server serves hosts on byte streams.
type Server struct {
	relay   *relay.Relay
	catalog *catalog.Catalog
	opts    Options
	log     *slog.Logger
	info    json.RawMessage // serverInfo
	surface hostsurface.Surface
	nextID  atomic.Uint64
	// tasks are the bounds of tasks and the questions of live ones.
	tasks hostjobs.Tasks
	// refused counts refused HTTP requests' log lines; lists coalesces
	// list-change notifications to hosts.
	refused *repeats
	lists   coalesce

	hostsMu sync.Mutex                // for Hosts
	streams map[*hostSession]struct{} // stream connections being served
	faces   []*hosthttp.Server        // the HTTP faces made by HTTP

	lastClient atomic.Pointer[clientMemo] // hosts.go
}

// New returns a Server.
func New(r *relay.Relay, c *catalog.Catalog, opts *Options) *Server {
	s := &Server{relay: r, catalog: c}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Logger == nil {
		s.opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.opts.Version == "" {
		s.opts.Version = "dev"
	}
	if s.opts.DrainTimeout <= 0 {
		s.opts.DrainTimeout = 2 * time.Second
	}
	s.log = s.opts.Logger
	s.tasks.Jobs, s.tasks.MaxTTL, s.tasks.PollInterval = s.opts.Jobs, s.opts.TaskMaxTTL, s.opts.TaskPollInterval
	s.refused = &repeats{log: s.log, window: repeatWindow}
	s.lists.window = listChangeWindow
	s.info = jsonrpc.MustMarshal(mcp.Implementation{Name: "mcpx", Title: "mcpx gateway", Version: s.opts.Version})
	s.surface.Init(r, c, s.log, s.info)
	return s
}

// Close stops what the Server does by itself once its hosts are gone:
// the timers of coalesced list-change notifications and of counted log
// lines; it waits for one that is firing. Call it once, after the last
// ServeConn has returned and the HTTP faces are closed.
func (s *Server) Close() {
	s.lists.timers.stop()
	s.refused.timers.stop()
}

// Conn is a host connection. Close must make a blocked Read return.
type Conn interface {
	io.Reader
	io.Writer
	io.Closer
}

// nowWriter is a Conn that can also write without waiting: WriteNow writes
// what it can of b at once and returns how much (0 when it cannot). A
// host's answers are then written by the goroutine that has them while
// the connection's writer is idle.
type nowWriter interface {
	WriteNow(b []byte) int
}

// Witness is a Conn that is told what the session reads. A host's stdio
// that `mcpx serve` handed to the daemon is one (package hoststream):
// serve must be able to take the host back, answering what the daemon
// read and never answered, and reading on where the daemon stopped.
type Witness interface {
	// Saw is called with each message read from the host, before it is
	// handled, on the goroutine that reads; line is valid only during
	// the call.
	Saw(msg *jsonrpc.Message, line []byte)
	// Unread is called once, as the session ends, with what had been
	// read and not used: the start of the host's next message.
	Unread(rest []byte)
}

// ServeConn serves one host until the host closes its side (its in-flight
// calls are then cancelled as "host disconnected") or ctx ends (they end as
// "mcpx is stopping", and the host is told so). It closes conn and returns
// once every goroutine it started has ended.
func (s *Server) ServeConn(ctx context.Context, conn Conn) error {
	hs := &hostSession{
		srv: s,
		id:  "host-" + strconv.FormatUint(s.nextID.Add(1), 10),
		// Requests are cancelled only through the registry, each with its
		// own cause: never by ctx's bare context.Canceled.
		base: context.WithoutCancel(ctx),
	}
	hs.connPrincipal = "conn:" + hs.id
	hs.who = principal.Host("")
	s.trackStream(hs, true)
	defer s.trackStream(hs, false)
	log := s.log.With("host", hs.id)
	log.Info("host connected")
	var writeNow func([]byte) int
	var shared func() bool
	if c, ok := conn.(nowWriter); ok {
		writeNow, shared = c.WriteNow, func() bool { return hs.inflight.Load() > 1 }
	}
	hs.out = &connSink{newHostQueue(writeNow, shared)}
	writerDone := make(chan struct{})
	go func() { defer close(writerDone); writeStream(hs.out.q, conn) }()

	// end ends the session for cause: no new requests, every call
	// cancelled, their answers written (within DrainTimeout), conn
	// closed, which ends the reader.
	end := func(cause relay.Kind) {
		hs.setClosing()
		s.relay.Registry().CancelSession(hs.id, &relay.Cause{Kind: cause})
		hs.handlers.Wait()
		hs.out.q.Close()
		select {
		case <-writerDone:
		case <-time.After(s.opts.DrainTimeout):
			log.Warn("host stopped reading; dropping what was queued for it")
		}
		conn.Close() // unblocks the reader and a blocked writer
	}
	// The host's messages are read on this goroutine (an idle host costs
	// one goroutine less); ctx ending stops the session on a goroutine
	// of its own, started only then.
	stopped := make(chan struct{})
	stopping := false // set before stopped closes
	notStopped := context.AfterFunc(ctx, func() {
		defer close(stopped)
		stopping = true
		end(relay.Stopping)
	})
	witness, _ := conn.(Witness)
	r := jsonrpc.NewReaderSize(conn, s.opts.MaxMessageBytes, hostReadBuffer)
	readErr := hs.readLoop(r, witness)
	if notStopped() {
		end(relay.HostDisconnected)
	} else {
		<-stopped // that read ended because the stop closed conn
	}
	<-writerDone
	if witness != nil {
		witness.Unread(r.Unread())
	}
	s.watchLegacy(hs, nil)
	s.leaveSurface(hs)
	log.Info("host disconnected", "coalescedProgress", hs.out.q.Coalesced())
	if !stopping && !errors.Is(readErr, io.EOF) { // readLoop always says why it ended
		return fmt.Errorf("reading from host: %w", readErr)
	}
	return nil
}

// hostReadBuffer is the read buffer of a host connection: a host sends
// small requests and is mostly idle, and an idle host should cost little
// (a longer line is read whole all the same).
const hostReadBuffer = 4 << 10

// hostSession is one host connection's state.
type hostSession struct {
	srv *Server
	id  string
	out *connSink
	// base is the parent of the session's request contexts: the values
	// of ServeConn's ctx without its end (requests end only through the
	// registry, each with its own cause). Not a service's ctx: it lives
	// exactly as long as the session.
	base     context.Context
	handlers sync.WaitGroup
	// who is who the session's requests come from, as its face decided
	// (Access.check for HTTP; principal.Host for a stream, known by its
	// clientInfo.name per request). Set once, at creation.
	who principal.Principal
	// subject is the access token a person (who) sent with the session's
	// latest HTTP request (subject.go); nil for anyone else.
	subject atomic.Pointer[string]
	// connPrincipal is a stream connection's principal (see principal),
	// made once. Set once, at creation.
	connPrincipal string
	inflight      atomic.Int64 // requests whose handler goroutine runs
	// stateless marks the host session of one 2026-07-28 HTTP request
	// (see hostKey). Set once, at creation.
	stateless bool
	// shared, if set, runs the session's requests on handler goroutines
	// shared with other sessions (a 2026-07-28 request's: workers.go).
	// Set once, at creation.
	shared *workers

	// questions are the requests mcpx has sent the host (an upstream's
	// elicitation, sampling or roots request, relayed) and not yet had
	// answered, under mcpx's own ids, unique in the session (a legacy
	// requirement) whatever id the upstream used (ask.go).
	questions jsonrpc.Pending

	capsMu   sync.Mutex
	capsMemo capsMemo // the last upstreamCaps (ask.go)

	// nextStream is closed as a stream next becomes the session's
	// (jobhost.go, hostjobs/ask.go); under its own lock, since
	// watchLegacy, which closes it, runs with mu held (initialize).
	streamMu   sync.Mutex
	nextStream chan struct{}

	mu          sync.Mutex
	closing     bool          // no new handlers once set
	work        chan *request // to a handler goroutine that waits for a request
	stop        chan struct{} // closed with closing: waiting handler goroutines end
	gone        chan struct{} // closed with closing, made by the first to wait for it (ended)
	initialized bool
	version     string
	clientCaps  json.RawMessage
	clientName  string
}

// sink is where a request's messages go: the connection's ordered queue
// (stdio), or the request's own response stream (HTTP). A message is
// queued only while live (nil: always) reports true, checked so that
// nothing of a request follows what was queued after live turned false.
// finish is called once per request, after the last message of it: a
// request's own stream ends there; the connection's queue ignores it.
//
// What a sink says of the stream under it: queue is the ordered queue on
// which mcpx may put requests of its own to the host (Push fails once the
// stream has ended), nil for a request answered at once;
// carriesRequests, whether such a request can reach the host on it (not
// on an HTTP response a host takes only as JSON); hostContext, a legacy
// HTTP request's context, done once its host has gone without
// cancelling, nil for every other sink.
type sink interface {
	pushWhile(live func() bool, line []byte)
	pushProgressWhile(live func() bool, key string, line []byte)
	finish()
	queue() *outq.Queue
	carriesRequests() bool
	hostContext() context.Context
}

func reply(out sink, id jsonrpc.ID, result json.RawMessage) {
	pushAnswer(out, nil, jsonrpc.NewResult(id, result).Encode())
}

func fail(out sink, id jsonrpc.ID, err *jsonrpc.Error) {
	pushAnswer(out, nil, jsonrpc.NewError(id, err).Encode())
}

// setClosing refuses new handlers from now on, and lets the handler
// goroutines that wait for another request end: handlers.Wait then waits
// for those still running one.
func (hs *hostSession) setClosing() {
	hs.mu.Lock()
	if !hs.closing && hs.stop != nil {
		close(hs.stop)
	}
	if !hs.closing && hs.gone != nil {
		close(hs.gone)
	}
	hs.closing = true
	hs.mu.Unlock()
}

// dispatch hands req to a handler goroutine that executes it, unless the
// session is closing: one that ran an earlier request and waits for
// another, or a new one.
//
// A handler goroutine outgrows its first stack on the way to the upstream
// (the relay's frames are deep), and the runtime copies it to a larger
// one for every new goroutine: a tenth of a relayed call's CPU. One that
// stays for the next request keeps its stack. It stays while requests
// keep coming, for workerIdle after its last, and ends at once when the
// session closes; each is counted in handlers. Saves the stack copy of a
// new goroutine per request (BenchmarkRelayCall, ns/op, in
// internal/hostserver).
func (hs *hostSession) dispatch(req *request) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.closing {
		return false
	}
	if hs.shared != nil {
		hs.handlers.Add(1)
		hs.shared.dispatch(hs, req)
		return true
	}
	if hs.stop == nil {
		hs.stop, hs.work = make(chan struct{}), make(chan *request)
	}
	select {
	case hs.work <- req: // a waiting handler goroutine took it
		return true
	default:
	}
	hs.handlers.Add(1)
	go hs.handlerLoop(req, hs.work, hs.stop)
	return true
}

// workerIdle is how long a handler goroutine waits for another request.
const workerIdle = time.Second

// handlerLoop executes req, then each request dispatch hands it, until it
// has waited workerIdle for one or stop is closed.
// A request whose call became a job ends it: it was counted gone then.
func (hs *hostSession) handlerLoop(req *request, work <-chan *request, stop <-chan struct{}) {
	var idle *time.Timer
	for {
		if hs.execute(req) {
			if idle != nil {
				idle.Stop()
			}
			return
		}
		if idle == nil {
			idle = time.NewTimer(workerIdle)
		} else {
			idle.Reset(workerIdle)
		}
		select {
		case req = <-work:
		case <-stop:
			idle.Stop()
			hs.handlers.Done()
			return
		case <-idle.C:
			hs.handlers.Done()
			return
		}
	}
}
