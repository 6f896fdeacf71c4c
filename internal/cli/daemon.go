package cli

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"strings"
)

func cmdDaemon() *command {
	var (
		configPath string
		background bool
		logFile    string
		logLevel   string
		storeURL   string
	)
	return &command{
		name:   "daemon",
		noArgs: true,
		short:  "run the daemon that owns the upstream servers (serve starts it)",
		long: `
Daemon owns the upstream servers of one config and serves hosts ("mcpx
serve"), the CLI and HTTP hosts (MCP over Streamable HTTP at /mcp) on a unix
socket (mode 0600) under $XDG_RUNTIME_DIR/mcpx, and HTTP hosts on TCP when
the config sets mcpx.http.listen (with the bearer token "mcpx token"
prints). A daemon is keyed by its config file and by the mcpx build, so
several run side by side. "mcpx serve" and the other commands start it when
needed; it exits after a configured time with nothing to do
(mcpx.daemonIdleExit, default 30m; never while it listens on TCP), on "mcpx
stop", or on SIGINT/SIGTERM.

With --store URL (or mcpx.store in the config) its jobs live in a PostgreSQL
server shared with other mcpx replicas behind a load balancer: any replica
reads, awaits and cancels any job, and takes a dead replica's jobs after
its lease (mcpx.jobs.leaseTerm, default 30s). See docs/replicas.md.`,
		setFlags: func(fs *flag.FlagSet) {
			configFlag(fs, &configPath)
			fs.BoolVar(&background, "background", false, "start the daemon detached, with its log in the state dir, and return once it serves (exit 3 with its error if it cannot start)")
			fs.StringVar(&logFile, "log", "", "append the log to `file` instead of stderr (at 10 MiB it becomes file.1)")
			logLevelFlag(fs, &logLevel, "info", "log")
			fs.StringVar(&storeURL, "store", "", "keep jobs in the PostgreSQL server at `url` (postgres://…), shared with other replicas, instead of mcpx.store")
		},
		run: func(ctx context.Context, env *Env, args []string) (err error) {
			ready := takeReadyPipe(env)
			defer func() {
				if ready != nil && err != nil && !errors.Is(err, ErrDaemonRunning) {
					// The log (stderr) names the error before the starting
					// command hears of it and points its user there.
					code := report(env, &command{name: "daemon"}, err)
					ready.done(err)
					err = &exitError{code, errSilent}
					return
				}
				ready.done(err)
			}()
			if storeURL != "" && !strings.HasPrefix(storeURL, "postgres://") && !strings.HasPrefix(storeURL, "postgresql://") {
				return usagef("invalid --store: want a PostgreSQL URL, postgres://user:password@host:port/database")
			}
			if storeURL != "" && background {
				// A detached daemon's arguments would show the password to ps.
				return usagef("--store does not go with --background: name the store in the config (mcpx.store) instead")
			}
			cfg, paths, err := loadConfig(env, configPath)
			if err != nil {
				return err
			}
			if storeURL != "" {
				cfg.Store = storeURL
			}
			files := paths.Daemon(cfg.File, env.Build)
			if background {
				return spawnDetached(env, cfg, files.Log)
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return usagef("invalid log level %q", logLevel)
			}
			w := env.Stderr
			if logFile != "" {
				f, err := openLogFile(logFile, maxLogBytes)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			log := slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
			err = env.RunDaemon(ctx, cfg, files, log, func() { ready.done(nil) })
			if errors.Is(err, ErrDaemonRunning) {
				return &exitError{ExitTransport, err}
			}
			return err
		},
	}
}

// ErrDaemonRunning is what RunDaemon returns when a daemon for the same
// config already runs; cmd/mcpx maps the daemon's own error to it.
var ErrDaemonRunning = errors.New("a daemon for this config is already running")
