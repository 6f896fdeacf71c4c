package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"

	"mcpx/internal/apitype"
	"mcpx/internal/config"
	"mcpx/internal/hoststream"
	"mcpx/internal/hosttoken"
	"mcpx/internal/sock"
)

func cmdServe() *command {
	var configPath string
	var inProcess bool
	var logLevel string
	var httpAddr, token string
	return &command{
		name:   "serve",
		noArgs: true,
		short:  "serve MCP to a host on stdin/stdout (what a host's config runs) or HTTP",
		long: `
Serve speaks MCP on stdin and stdout, every protocol revision, with the tools
of every configured upstream server. By default it forwards the host's stream
to the mcpx daemon for this config, starting the daemon if none runs, so that
every host on the machine shares one set of upstream processes. When stdin
and stdout are pipes or sockets it hands them to the daemon, which reads and
writes them itself; MCPX_HANDOFF=off in the environment forwards instead. With
--in-process it runs everything itself and stops its upstreams when the host
leaves. Logs go to stderr.

With --http ADDR it serves MCP over Streamable HTTP instead, at
http://ADDR/mcp, every revision, with upstreams of its own (as --in-process),
until interrupted; it prints the URL on stderr. ADDR is host:port (a bare
:port is 127.0.0.1; port 0 picks a free one). Every request must carry
"Authorization: Bearer <token>": the token "mcpx token" prints, or a host's
own ("mcpx token --name NAME"). --token none turns that off, on a loopback
address only, for local tools that cannot send headers. To serve HTTP hosts
from the shared daemon instead, set mcpx.http.listen in the config. When
the config names a shared store (mcpx.store, a PostgreSQL URL), --http runs
as one replica of several behind a load balancer (docs/replicas.md).`,
		setFlags: func(fs *flag.FlagSet) {
			configFlag(fs, &configPath)
			fs.BoolVar(&inProcess, "in-process", false, "run the upstreams in this process instead of the shared daemon")
			logLevelFlag(fs, &logLevel, "warn", "stderr log")
			fs.StringVar(&httpAddr, "http", "", "serve MCP over HTTP on `addr` (host:port) instead of stdin/stdout")
			fs.StringVar(&token, "token", "", "with --http: `none` requires no bearer token (loopback addresses only)")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			if token != "" && token != "none" {
				return usagef("invalid --token %q: the only value is none (the token itself is in its file; \"mcpx token\" prints it)", token)
			}
			if token != "" && httpAddr == "" {
				return usagef("--token needs --http")
			}
			var addr string
			if httpAddr != "" {
				var err error
				if addr, err = config.ListenAddr(httpAddr); err != nil {
					return usagef("invalid --http %q: %v", httpAddr, err)
				}
				if token == "none" && !config.IsLoopback(addr) {
					return usagef("--token none is allowed only on a loopback address (127.0.0.1, [::1], localhost), not %s", addr)
				}
			}
			log, err := newLogger(env.Stderr, logLevel)
			if err != nil {
				return err
			}
			cfg, paths, err := loadConfig(env, configPath)
			if err != nil {
				return err
			}
			if addr != "" {
				return serveHTTP(ctx, env, cfg, paths, addr, token == "none", log)
			}
			stdio := hoststream.NewStdio(env.Stdin, env.Stdout)
			if env.SerialStdio != nil {
				env.SerialStdio()
			}
			if inProcess {
				return env.ServeInProcess(ctx, cfg, stdio, log)
			}
			opts := hoststream.Options{
				Log:     log,
				MaxLine: cfg.MaxMessageBytes,
				Dial: func(ctx context.Context) (hoststream.Stream, error) {
					c, err := connect(ctx, env, cfg, paths)
					if err != nil {
						return nil, err
					}
					s, err := c.DialHost(ctx)
					if err != nil {
						return nil, err
					}
					return s, nil
				},
				HandOff: func(ctx context.Context, in, out, table int, start *apitype.HandoffStart) (hoststream.Events, hoststream.Stream, error) {
					c, err := connect(ctx, env, cfg, paths)
					if err != nil {
						return nil, nil, err
					}
					h, s, err := c.HandOff(ctx, in, out, table, start)
					switch {
					case err != nil:
						return nil, nil, err
					case h != nil:
						return h, nil, nil
					default:
						return nil, s, nil
					}
				},
			}
			if env.getenv("MCPX_HANDOFF") == "off" {
				opts.HandOff = nil // forward only
			}
			return hoststream.Serve(ctx, stdio, opts)
		},
	}
}

// serveHTTP serves MCP over HTTP on addr until ctx ends.
func serveHTTP(ctx context.Context, env *Env, cfg *config.Config, paths config.Paths, addr string, noToken bool, log *slog.Logger) error {
	var tokens *hosttoken.HostTokens
	file := paths.TokenFile()
	if !noToken {
		token, err := config.Token(file)
		if err != nil {
			return err
		}
		tokens = hosttoken.NewHostTokens(token, paths.TokenDir(), func(err error) { log.Warn("reading the named host tokens", "err", err) })
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening for HTTP hosts: %w", err)
	}
	fmt.Fprintf(env.Stderr, "mcpx: serving MCP at http://%s/mcp\n", ln.Addr())
	if noToken {
		fmt.Fprintln(env.Stderr, "mcpx: no bearer token required (--token none)")
	} else {
		fmt.Fprintf(env.Stderr, "mcpx: bearer token in %s (\"mcpx token\" prints it; \"mcpx token --name NAME\" a host's own)\n", file)
	}
	return env.ServeHTTP(ctx, cfg, sock.RawTCPListener(ln), tokens, log)
}

// logLevelFlag declares --log-level, which newLogger reads; what names
// the log in the help text.
func logLevelFlag(fs *flag.FlagSet, dst *string, def, what string) {
	fs.StringVar(dst, "log-level", def, what+" `level`: debug, info, warn or error")
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("invalid log level %q", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
