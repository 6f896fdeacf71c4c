// Package daemon wires mcpx together: the upstream pool, the registry of
// in-flight calls, the relay, the catalog, the host face and the local API.
// It is the only package that builds these concrete types.
//
// [Run] is the shared daemon on a unix socket; [ServeStdio] is the same
// core serving one host in-process, and [ServeHTTP] serving HTTP hosts. Both return only after every process
// and goroutine they started has ended.
package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/bridge"
	"mcpx/internal/catalog"
	"mcpx/internal/codemode"
	"mcpx/internal/config"
	"mcpx/internal/hosthttp"
	"mcpx/internal/hostserver"
	"mcpx/internal/hosttoken"
	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/localapi"
	"mcpx/internal/mcp"
	"mcpx/internal/oauth"
	"mcpx/internal/relay"
	"mcpx/internal/sandbox"
	"mcpx/internal/store"
	"mcpx/internal/supervise"
	"mcpx/internal/tracing"
	"mcpx/internal/ui"
	"mcpx/internal/upstream"
)

// Options configure the daemon or the in-process core.
type Options struct {
	Config  *config.Config
	Version string
	Logger  *slog.Logger
	// Files are the daemon's socket, lock and log (Run only).
	Files config.DaemonFiles
	// Ready, if set, is called once Run serves on its socket (Run only).
	Ready func()
	// Build is the executable's config.BuildID (Run only): once the
	// executable no longer matches it, the daemon exits as soon as it is
	// idle. "" disables the check.
	Build string
	// Idle, if set, is called once each time the daemon has had no host,
	// request or call for a while (Run only): its memory can go back to
	// the system until something comes.
	Idle func()
	// Shim is the mcpx executable: it supervises each stdio upstream (see
	// supervise.Options) and runs each script (see sandbox); "" starts
	// upstreams directly and leaves scripts (mcpx_exec) out.
	Shim string
	// OAuthDir holds the upstream sign-ins (mcpx login); "" is the state
	// directory's (config.Paths.OAuthDir), and none when that cannot be
	// located.
	OAuthDir string
	// OAuthBrowser, when set, lets the core sign in to a server that asks
	// by itself, showing the authorization URL with it (headless sign-in:
	// tests and the conformance suite). Unset, such a call fails with an
	// error that says to run mcpx login.
	OAuthBrowser oauth.Browser
	// LookOnly makes a core that only looks (mcpx doctor's probes): it
	// opens no job store, and a shared store only to read the sign-ins,
	// only if it is at this build's schema, never migrating it.
	LookOnly bool
	// Observe, if set, is given the gateway's status as the local API
	// reports it (ServeStdio only, which has no socket to ask): tests of
	// an in-process gateway read it where a daemon's would be asked.
	Observe func(status func() apitype.Status)

	// httpAddr is where this core serves HTTP hosts ("" for nowhere): a
	// replica names it to the others.
	httpAddr string
}

func (o *Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// core is one gateway: what Run and ServeStdio share.
type core struct {
	signIns *oauth.SignIns // nil when there is no place for sign-ins
	// people are the per-person sign-ins, through the HTTP face; nil
	// with signIns, or when no HTTP listener serves their pages.
	people  *oauth.Gateway
	refresh *oauth.Refresher // keeps signIns fresh; nil with them
	// closeSignIns releases the sign-ins' store.
	closeSignIns func()
	pool         *upstream.Pool
	relay        *relay.Relay
	bridge       *bridge.Bridge // the relay's, across revisions
	catalog      *catalog.Catalog
	hosts        *hostserver.Server
	tracer       *tracing.Tracer // nil without mcpx.traces
	log          *slog.Logger
	sandbox      *sandbox.Pool    // nil without an executable
	scripts      *codemode.Engine // nil without an executable
	jobs         *jobs.Manager    // nil: no job store
	jobsOnNeed   bool             // jobs opens its store on first need
	store        store.Store      // nil until opened
	unlock       func()           // the job store's lock, if this core holds it
	audit        *auditing
}

// newCore builds a core; obs, if not nil, observes its calls and
// upstreams (the daemon's metrics and live view).
func newCore(opts *Options, obs *ui.Observer) *core {
	log := opts.logger()
	cfg := opts.Config
	// The pool tells the host face of tool list changes; the face is made
	// after the pool, hence the pointer.
	var face atomic.Pointer[hostserver.Server]
	recs, closeRecs := opts.signInRecords(log)
	pool := upstream.NewPool(cfg, &upstream.Options{
		Logger:          log,
		ClientInfo:      mcp.Implementation{Name: "mcpx", Version: opts.Version},
		MaxMessageBytes: cfg.MaxMessageBytes,
		ProbeTimeout:    cfg.ProbeTimeout,
		Supervision:     &supervise.Options{Shim: opts.Shim, Records: opts.Files.Upstreams},
		Observer:        upstreamObserver(obs),
		Authorize:       opts.authorizer(recs, log),
		OnToolsChanged: func(string) {
			if h := face.Load(); h != nil {
				h.ToolsChanged()
			}
		},
		OnNotify: func(server string, msg *jsonrpc.Message) {
			if h := face.Load(); h != nil {
				h.UpstreamNotified(server, msg)
			}
		},
		OnHostMessage: func(server, host string, msg *jsonrpc.Message) {
			if h := face.Load(); h != nil {
				h.HostLogMessage(server, host, msg)
			}
		},
	})
	r := relay.New(cfg, pool, relay.NewRegistry(), log)
	b := bridge.New(r, log)
	r.SetBridge(b)
	if obs != nil {
		r.SetObserver(obs)
	}
	var tracer *tracing.Tracer
	if cfg.Traces.Endpoint != "" {
		var err error
		if tracer, err = tracing.New(context.Background(), cfg.Traces, opts.Version); err != nil {
			log.Warn("no traces", "err", err)
		} else {
			r.SetTracer(tracer)
			log.Info("sending traces", "endpoint", cfg.Traces.Endpoint)
		}
	}
	cat := catalog.New(pool, catalog.Naming{Prefix: string(cfg.ToolNames.Prefix), Separator: cfg.ToolNames.Separator}, log)
	c := &core{pool: pool, relay: r, bridge: b, catalog: cat, tracer: tracer, log: log, closeSignIns: closeRecs}
	c.openJobs(opts, r, jobsObserver(obs), log)
	c.openAudit(opts, log)
	if opts.Shim != "" {
		c.sandbox = sandbox.NewPool(sandbox.PoolOptions{Executable: opts.Shim})
		c.scripts = codemode.New(codemode.Options{Relay: r, Catalog: cat, Pool: c.sandbox})
	}
	c.hosts = hostserver.New(r, cat, &hostserver.Options{Logger: log, Version: opts.Version, MaxMessageBytes: cfg.MaxMessageBytes,
		Scripts: c.scripts, Jobs: c.jobs, TaskMaxTTL: cfg.Jobs.TaskMaxTTL, TaskPollInterval: cfg.Jobs.TaskPollInterval})
	face.Store(c.hosts)
	if recs != nil {
		c.signIns = &oauth.SignIns{Store: recs, Log: log, Ended: c.audit.signInEnded}
		if !opts.LookOnly { // a core that only looks refreshes nothing ahead
			c.refresh = c.refresher(recs)
		}
		b.SetSignIns(c.signIns)
		b.SetTokenExchanger(&oauth.Exchanger{Records: recs})
		// The HTTP listener serves the sign-in pages (Run, ServeHTTP).
		if opts.httpAddr != "" && !opts.LookOnly {
			c.people = c.gateway(recs, opts.httpAddr)
			b.SetPersonSignIns(c.people)
		}
	}
	return c
}

// runJobs runs the job manager, if any, until stop is called, which ends
// its calls with "mcpx is stopping" and closes the store. It returns once
// the manager has dealt with the jobs a dead gateway left running.
func (c *core) runJobs(ctx context.Context) (stop func()) {
	if c.jobs == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.jobs.Run(ctx)
	}()
	// The orphans of a dead gateway are closed or run again before any
	// host can ask for them (a store opened on first need: before that
	// need is met).
	if !c.jobsOnNeed {
		<-c.jobs.Started()
	}
	return func() {
		cancel()
		<-done
		c.audit.stop() // its last records go to the store before it closes
		if c.store != nil {
			c.store.Close()
		}
		if c.unlock != nil {
			c.unlock()
		}
	}
}

// stopTracing exports the spans not yet exported, for at most 5 s.
func (c *core) stopTracing() {
	if c.tracer == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.tracer.Shutdown(ctx); err != nil {
		c.log.Warn("exporting the last spans", "err", err)
	}
}

// runPool runs the upstream pool, the scripts' warm children and the
// background refresh of sign-ins until the returned stop is called, which
// waits for them all.
func (c *core) runPool(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.pool.Run(ctx)
	}()
	warm := make(chan struct{})
	go func() {
		defer close(warm)
		if c.sandbox != nil {
			_ = c.sandbox.Run(ctx)
		}
	}()
	refreshed := make(chan struct{})
	go func() {
		defer close(refreshed)
		if c.refresh != nil {
			_ = c.refresh.Run(ctx)
		}
	}()
	return func() {
		cancel()
		<-done
		<-warm
		<-refreshed
		if c.signIns != nil {
			c.signIns.Close() // the sign-ins hosts started and left unfinished
		}
		c.closeSignIns()
	}
}

// run runs c's services for a serve of its own: the pool (and the
// scripts' warm children), the jobs and the config's watcher, until the
// returned stop is called, which stops them in the reverse order and
// exports the last spans.
func (c *core) run(ctx context.Context, opts *Options) (stop func()) {
	c.audit.run(ctx)
	stopPool := c.runPool(ctx)
	stopJobs := c.runJobs(ctx)
	stopWatch := c.watchConfig(ctx, opts)
	return func() {
		stopWatch()
		stopJobs()
		stopPool()
		c.audit.stop()
		c.hosts.Close()
		c.stopTracing()
	}
}

// ServeStdio serves one host on r and w with a core of its own: everything
// in one process. It returns when the host leaves or ctx ends (the host's
// calls then end with "mcpx is stopping"), after stopping every upstream.
func ServeStdio(ctx context.Context, opts *Options, conn hostserver.Conn) error {
	c := newCore(opts, nil)
	defer c.run(ctx, opts)()
	if opts.Observe != nil {
		opts.Observe(localapi.New(c.relay, c.catalog, &localapi.Options{Logger: opts.logger(), Version: opts.Version}).Status)
	}
	err := c.hosts.ServeConn(ctx, conn)
	// Calls of this host that outlived it were cancelled as it left.
	c.relay.Registry().CancelAll(&relay.Cause{Kind: relay.Stopping})
	return err
}

// ServeHTTP serves MCP over Streamable HTTP at /mcp on ln with a core of
// its own (`mcpx serve --http`), requiring one of tokens unless it is nil,
// until ctx ends: calls in flight then end with "mcpx is stopping", the
// streams close and the upstreams stop. It closes ln.
func ServeHTTP(ctx context.Context, opts *Options, ln net.Listener, tokens *hosttoken.HostTokens) error {
	log := opts.logger()
	o := *opts
	o.httpAddr, opts = ln.Addr().String(), &o
	c := newCore(opts, nil)
	defer c.run(ctx, opts)()
	face := c.hosts.HTTP(&hosthttp.Options{SessionIdle: opts.Config.HTTP.SessionIdle, MaxSessions: opts.Config.HTTP.MaxSessions})
	guard := newConnGuard(true)
	access := tcpAccess(ln.Addr().String(), c.hostTokens(tokens, opts.Config.Store != ""), opts.Config.HTTP.AllowedHosts)
	access.People = people(opts.Config.Auth, log)
	mux := mcpMux(face.Handler(access))
	serveMetadata(mux, access)
	if c.people != nil {
		// The per-person sign-in pages, alone of the local API: a
		// person's browser may be sent to any replica.
		pages := localapi.New(c.relay, c.catalog, &localapi.Options{Logger: log, Version: opts.Version, SignIns: c.people}).SignInPages()
		mux.Handle(oauth.StartPath, pages)
		mux.Handle(oauth.CallbackPath, pages)
	}
	srv := httpServer(mux, log, guard)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(guard.Listener(ln)) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	c.relay.Registry().CancelAll(&relay.Cause{Kind: relay.Stopping})
	face.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if srv.Shutdown(sctx) != nil {
		srv.Close()
	}
	if err == nil {
		err = <-served
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// tcpAccess is who may use the HTTP face on a TCP listener at addr: the
// holders of tokens, or anyone if tokens is nil.
func tcpAccess(addr string, tokens hosthttp.Tokens, allowed []string) hosthttp.Access {
	return hosthttp.Access{Addr: addr, Tokens: tokens, AllowedHosts: allowed}
}

// watchConfig applies edits of the config file to c until the returned
// stop is called (which waits for the watcher).
func (c *core) watchConfig(ctx context.Context, opts *Options) (stop func()) {
	rl := newReloader(c, opts.Config, opts.logger())
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { defer close(done); rl.watch(ctx) }()
	return func() { cancel(); <-done }
}

// jobsObserver is obs as the job manager's observer: none when obs is
// nil.
func jobsObserver(obs *ui.Observer) jobs.Observer {
	if obs == nil {
		return nil
	}
	return obs
}

// upstreamObserver is obs as the pool's observer: none (a nil interface,
// not a nil pointer in one) when obs is nil.
func upstreamObserver(obs *ui.Observer) upstream.Observer {
	if obs == nil {
		return nil
	}
	return obs
}
