package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/localapi"
	"mcpx/internal/relay"
	"mcpx/internal/sock"
)

// ErrRunning is returned by Run when a daemon for the same config and
// build already holds the lock.
var ErrRunning = errors.New("a daemon for this config is already running")

// Run serves the local API and host streams on opts.Files.Socket until ctx
// ends, a client asks for shutdown, or it has been idle (no host, no call)
// for the config's DaemonIdleExit. Cancelling ctx is not an error.
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
	ln, err := sock.Listen(opts.Files.Socket)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	log.Info("daemon listening", "socket", opts.Files.Socket, "config", opts.Config.File, "version", opts.Version)

	c := newCore(opts)
	stopPool := c.runPool(ctx)

	hostCtx, stopHosts := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHosts()
	act := newActivity()
	shutdown := make(chan struct{})
	var shutdownOnce sync.Once
	api := localapi.New(c.relay, c.catalog, &localapi.Options{
		Logger:     log,
		Version:    opts.Version,
		ConfigFile: opts.Config.File,
		Socket:     opts.Files.Socket,
		Started:    time.Now(),
		Hosts:      act.hosts,
		Shutdown:   func() { shutdownOnce.Do(func() { close(shutdown) }) },
		ServeHost: func(conn io.ReadWriteCloser) error {
			if !act.hostIn() {
				conn.Close()
				return nil
			}
			defer act.hostOut()
			return c.hosts.ServeConn(hostCtx, conn)
		},
	})
	srv := &http.Server{
		Handler:           act.track(api),
		ReadHeaderTimeout: 10 * time.Second,
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(&peerCheckListener{Listener: ln, log: log}) }()

	idle := act.idleTimer(opts.Config.DaemonIdleExit, c.relay.Registry().Len, staleBuild(opts.Build))
	defer idle.stop()
	var runErr error
	select {
	case <-ctx.Done():
		log.Info("daemon stopping", "why", context.Cause(ctx))
	case <-shutdown:
		log.Info("daemon stopping", "why", "asked to")
	case <-idle.fired:
		log.Info("daemon stopping", "why", "idle (or its executable was replaced)", "idleExit", opts.Config.DaemonIdleExit)
	case runErr = <-serveErr:
		log.Error("daemon stopped serving", "err", runErr)
	}
	// Calls end first, each with "mcpx is stopping", so every host and
	// client is told; then the listeners close; then the upstreams stop.
	stopHosts()
	c.relay.Registry().CancelAll(&relay.Cause{Kind: relay.Stopping})
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if runErr == nil {
		<-serveErr
	}
	act.close()
	stopPool()
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
