package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/config"
	"mcpx/internal/hosthttp"
	"mcpx/internal/hostserver"
	"mcpx/internal/hosttoken"
	"mcpx/internal/localapi"
	"mcpx/internal/oauth"
	"mcpx/internal/relay"
	"mcpx/internal/sock"
	"mcpx/internal/supervise"
)

// ErrRunning is returned by Run when a daemon for the same config and
// build already holds the lock.
var ErrRunning = errors.New("a daemon for this config is already running")

// Run serves the local API, host streams and MCP over HTTP (at /mcp) on
// opts.Files.Socket, and MCP over HTTP on the config's mcpx.http.listen
// address if set (with the bearer token of opts.Files.Token), until ctx
// ends, a client asks for shutdown, or it has been idle (no host, no call)
// for the config's DaemonIdleExit (never, with a TCP listener: HTTP hosts
// cannot start a daemon). Cancelling ctx is not an error.
func Run(ctx context.Context, opts *Options) error {
	log := opts.logger()
	unlock, err := sock.Lock(opts.Files.Lock)
	if errors.Is(err, sock.ErrLocked) {
		return fmt.Errorf("%w (%v)", ErrRunning, err)
	}
	if err != nil {
		return fmt.Errorf("locking the daemon: %w", err)
	}
	defer unlock()
	// What an earlier daemon left running (killed before it could stop
	// its upstreams, with their supervisors) dies now.
	if opts.Files.Upstreams != "" {
		supervise.Reap(opts.Files.Upstreams, log)
	}
	// TCP first: a port in use fails the start before anything else.
	var tcpLn net.Listener
	var tokens *hosttoken.HostTokens
	if listen := opts.Config.HTTP.Listen; listen != "" {
		token, err := config.Token(opts.Files.Token)
		if err != nil {
			return fmt.Errorf("reading the HTTP token: %w", err)
		}
		tokens = hosttoken.NewHostTokens(token, opts.Files.TokenDir, func(err error) { log.Warn("reading the named host tokens", "err", err) })
		if tcpLn, err = net.Listen("tcp", listen); err != nil {
			return fmt.Errorf("listening on mcpx.http.listen %s: %w", listen, err)
		}
		defer tcpLn.Close()
		o := *opts
		o.httpAddr, opts = tcpLn.Addr().String(), &o
	}
	ln, err := sock.Listen(opts.Files.Socket)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	log.Info("daemon listening", "socket", opts.Files.Socket, "config", opts.Config.File, "version", opts.Version)

	act := newActivity()
	seen := newObserving(log, act)
	c := newCore(opts, seen.obs)
	seen.labelFrom(c.pool)
	defer c.stopTracing()
	c.audit.run(ctx)
	stopPool := c.runPool(ctx)
	stopJobs := c.runJobs(ctx)
	rl := newReloader(c, opts.Config, log)
	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	watched := make(chan struct{})
	go func() { defer close(watched); rl.watch(watchCtx) }()
	defer func() { stopWatch(); <-watched }()

	hostCtx, stopHosts := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHosts()
	shutdown := make(chan struct{})
	var shutdownOnce sync.Once
	face := c.hosts.HTTP(&hosthttp.Options{SessionIdle: opts.Config.HTTP.SessionIdle, MaxSessions: opts.Config.HTTP.MaxSessions})
	apiOpts := &localapi.Options{
		Jobs:          c.jobs,
		Scripts:       c.scripts,
		Logger:        log,
		Version:       opts.Version,
		ConfigFile:    opts.Config.File,
		Socket:        opts.Files.Socket,
		Started:       time.Now(),
		Hosts:         act.hosts,
		Connected:     func() []apitype.ConnectedHost { return connectedHosts(c.hosts) },
		MCP:           face.Handler(hosthttp.Access{}),
		HTTPSessions:  face.Sessions,
		Shutdown:      func() { shutdownOnce.Do(func() { close(shutdown) }) },
		Reload:        rl.reload,
		ReloadFailure: rl.failed,
		Metrics:       seen.metrics.Handler(),
		UILink:        seen.link,
		MetaTools:     func() []apitype.Tool { return metaTools(c.hosts) },
		ServeHost: func(conn io.ReadWriteCloser) error {
			if !act.hostIn() {
				conn.Close()
				return nil
			}
			defer act.hostOut()
			return c.hosts.ServeConn(hostCtx, conn)
		},
	}
	serveErr := make(chan error, 2)
	var tcp *http.Server
	if tcpLn != nil {
		addr := tcpLn.Addr().String()
		apiOpts.HTTP, apiOpts.TokenFile = "http://"+addr+apitype.PathMCP, opts.Files.Token
	}
	if c.signIns != nil {
		apiOpts.OAuth = c.signIns.Store
	}
	if c.refresh != nil {
		apiOpts.RefreshFailing = c.refresh.Failing
	}
	apiOpts.Audit, apiOpts.AuditStore = c.audit.log(), c.audit.table()
	if c.sandbox != nil {
		apiOpts.Sandbox = c.sandbox.Idle
	}
	if c.people != nil && tcpLn != nil {
		apiOpts.SignIns = c.people
	}
	api := localapi.New(c.relay, c.catalog, apiOpts)
	seen.api, seen.policy = api, c.relay.Policy
	if tcpLn != nil {
		addr := tcpLn.Addr().String()
		access := tcpAccess(addr, c.hostTokens(tokens, opts.Config.Store != ""), opts.Config.HTTP.AllowedHosts)
		access.People = people(opts.Config.Auth, log)
		mux := mcpMux(face.Handler(access))
		serveMetadata(mux, access)
		seen.onHTTP(mux, addr, access, opts.Config.HTTP.PublicURL)
		mux.Handle("/v1/", api.V1(access.Check))
		if pages := api.SignInPages(); pages != nil {
			mux.Handle(oauth.StartPath, pages)
			mux.Handle(oauth.CallbackPath, pages)
		}
		guard := newConnGuard(true)
		tcp = httpServer(act.track(mux), log, guard)
		go func() { serveErr <- tcp.Serve(guard.Listener(sock.RawTCPListener(tcpLn))) }()
		log.Info("daemon serving MCP over HTTP", "url", apiOpts.HTTP, "tokenFile", opts.Files.Token, "tokenDir", opts.Files.TokenDir)
	}
	apiGuard := newConnGuard(false)
	srv := httpServer(act.track(api), log, apiGuard)
	go func() { serveErr <- srv.Serve(apiGuard.Listener(&peerCheckListener{Listener: ln, log: log})) }()
	if opts.Ready != nil {
		opts.Ready() // the socket listens: clients connect from now on
	}

	// HTTP hosts cannot start a daemon: one that listens for them stays.
	idleExit := opts.Config.DaemonIdleExit
	if tcpLn != nil {
		idleExit = 0
	}
	idle := act.idleTimer(idleExit, c.relay.Registry().Len, staleBuild(opts.Build), opts.Idle)
	defer idle.stop()
	var runErr error
	select {
	case <-ctx.Done():
		log.Info("daemon stopping", "why", context.Cause(ctx))
	case <-shutdown:
		log.Info("daemon stopping", "why", "asked to")
	case <-idle.fired:
		log.Info("daemon stopping", "why", "idle (or its executable was replaced)", "idleExit", idleExit)
	case runErr = <-serveErr:
		log.Error("daemon stopped serving", "err", runErr)
	}
	// Calls end first, each with "mcpx is stopping", so every host and
	// client is told; then the listeners close; then the upstreams stop.
	stopHosts()
	c.relay.Registry().CancelAll(&relay.Cause{Kind: relay.Stopping})
	face.Close()
	seen.live.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	seen.stop(sctx)
	servers := []*http.Server{srv}
	if tcp != nil {
		servers = append(servers, tcp)
	}
	for _, s := range servers {
		if err := s.Shutdown(sctx); err != nil {
			s.Close()
		}
	}
	for range len(servers) - btoi(runErr != nil) {
		<-serveErr
	}
	act.close()
	api.Wait()
	stopJobs() // before the upstreams stop: its calls tell them why they end
	stopPool()
	c.audit.stop()
	c.hosts.Close()
	if runErr != nil && !errors.Is(runErr, http.ErrServerClosed) {
		return runErr
	}
	log.Info("daemon stopped")
	return nil
}

// staleBuild reports whether this process's executable is no longer the
// build it started as. An empty build never goes stale.
func staleBuild(build string) func() bool {
	return func() bool {
		if build == "" {
			return false
		}
		now, err := config.BuildID()
		return err != nil || now != build
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// mcpMux serves h at apitype.PathMCP and nothing else.
func mcpMux(h http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(apitype.PathMCP, h)
	return mux
}

// metaTools is mcpx's own tools as the local API lists them, each with
// the route that serves it: mcpx_exec when s runs scripts (PathV1Exec),
// mcpx_job and mcpx_job_cancel when it keeps jobs (PathV1JobWait,
// PathV1JobCancel).
func metaTools(s *hostserver.Server) []apitype.Tool {
	var out []apitype.Tool
	add := func(raw json.RawMessage, route string) {
		var def struct {
			Name        string          `json:"name"`
			Title       string          `json:"title"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if raw == nil || json.Unmarshal(raw, &def) != nil {
			return
		}
		out = append(out, apitype.Tool{Name: def.Name, Server: "mcpx", Tool: def.Name, Title: def.Title,
			Description: def.Description, InputSchema: def.InputSchema, Route: route})
	}
	add(s.ExecTool(), apitype.PathV1Exec)
	if jt := s.JobTools(); len(jt) == 2 {
		add(jt[0], apitype.PathV1JobWait)
		add(jt[1], apitype.PathV1JobCancel)
	}
	return out
}

// connectedHosts is the hosts s serves, for status.
func connectedHosts(s *hostserver.Server) []apitype.ConnectedHost {
	hosts := s.Hosts()
	out := make([]apitype.ConnectedHost, 0, len(hosts))
	for _, h := range hosts {
		p := h.Profile
		out = append(out, apitype.ConnectedHost{ID: h.ID, Client: h.Client, Protocol: h.Protocol, Profile: apitype.HostProfile{
			Name: p.Name, TimeoutMs: p.Timeout.Milliseconds(), ResetOnProgress: p.ResetOnProgress, Source: p.Source,
		}})
	}
	return out
}
