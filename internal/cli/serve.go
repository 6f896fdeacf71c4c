package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"syscall"

	"mcpx/internal/apitype"
	"mcpx/internal/config"
	"mcpx/internal/localclient"
	"mcpx/internal/sock"
)

func cmdServe() *command {
	var configPath string
	var inProcess bool
	var logLevel string
	var httpAddr, token string
	return &command{
		name:  "serve",
		short: "serve MCP to a host on stdin/stdout (what a host's config runs) or HTTP",
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
from the shared daemon instead, set mcpx.http.listen in the config.`,
		setFlags: func(fs *flag.FlagSet) {
			configFlag(fs, &configPath)
			fs.BoolVar(&inProcess, "in-process", false, "run the upstreams in this process instead of the shared daemon")
			fs.StringVar(&logLevel, "log-level", "warn", "stderr log `level`: debug, info, warn or error")
			fs.StringVar(&httpAddr, "http", "", "serve MCP over HTTP on `addr` (host:port) instead of stdin/stdout")
			fs.StringVar(&token, "token", "", "with --http: `none` requires no bearer token (loopback addresses only)")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) > 0 {
				return usagef("unexpected argument %q", args[0])
			}
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
			stdio := newStdio(env)
			if env.SerialStdio != nil {
				env.SerialStdio()
			}
			if inProcess {
				return env.ServeInProcess(ctx, cfg, stdio, log)
			}
			f := &forwarder{
				host:    stdio,
				log:     log,
				maxLine: cfg.MaxMessageBytes,
				dial: func(ctx context.Context) (*localclient.HostStream, error) {
					c, err := connect(ctx, env, cfg, paths)
					if err != nil {
						return nil, err
					}
					return c.DialHost(ctx)
				},
			}
			if env.getenv("MCPX_HANDOFF") == "off" {
				log.Debug("mcpx serve: forwarding the host's stdio (MCPX_HANDOFF=off)")
			} else if err := canHandOff(stdio); err != nil {
				log.Debug("mcpx serve: forwarding the host's stdio", "why", err)
			} else {
				f.handoff = func(ctx context.Context, table *os.File, start *apitype.HandoffStart) (*localclient.Handoff, *localclient.HostStream, error) {
					c, err := connect(ctx, env, cfg, paths)
					if err != nil {
						return nil, nil, err
					}
					return c.HandOff(ctx, stdio.inFD, stdio.outFD, int(table.Fd()), start)
				}
			}
			return f.run(ctx)
		},
	}
}

// serveHTTP serves MCP over HTTP on addr until ctx ends.
func serveHTTP(ctx context.Context, env *Env, cfg *config.Config, paths config.Paths, addr string, noToken bool, log *slog.Logger) error {
	var tokens *config.HostTokens
	file := paths.TokenFile()
	if !noToken {
		token, err := config.Token(file)
		if err != nil {
			return err
		}
		tokens = config.NewHostTokens(token, paths.TokenDir(), func(err error) { log.Warn("reading the named host tokens", "err", err) })
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
	return env.ServeHTTP(ctx, cfg, ln, tokens, log)
}

// stdio is this process's stdin and stdout as one connection. Both are
// made non-blocking, so that Close interrupts a pending Read and a Write
// blocked on a host that stopped reading: mcpx can always shut down.
type stdio struct {
	inFD     int // this process's stdin, or -1 if in is not it
	outFD    int // this process's stdout, or -1 if out is not it
	in       io.ReadCloser
	read     io.Reader // in, or a raw reader of it (sock.RawReader)
	out      io.Writer
	write    io.Writer        // out, or a raw writer of it (sock.RawWriter)
	writeNow func([]byte) int // nil unless stdout is this process's own
}

func newStdio(env *Env) *stdio {
	s := &stdio{in: io.NopCloser(env.Stdin), out: env.Stdout, inFD: -1, outFD: -1}
	if f, ok := env.Stdin.(*os.File); ok && f == os.Stdin {
		if err := syscall.SetNonblock(int(f.Fd()), true); err == nil {
			in := os.NewFile(f.Fd(), "stdin")
			s.in, s.read, s.inFD = in, sock.RawReader(in), int(f.Fd())
		}
	}
	if s.read == nil {
		s.read = s.in
	}
	if f, ok := env.Stdout.(*os.File); ok && f == os.Stdout {
		if err := syscall.SetNonblock(int(f.Fd()), true); err == nil {
			out := os.NewFile(f.Fd(), "stdout")
			s.out, s.write, s.writeNow, s.outFD = out, sock.RawWriter(out), sock.NowWriter(out), int(f.Fd())
		}
	}
	if s.write == nil {
		s.write = s.out
	}
	return s
}

func (s *stdio) Read(p []byte) (int, error)  { return s.read.Read(p) }
func (s *stdio) Write(p []byte) (int, error) { return s.write.Write(p) }

// WriteNow writes what stdout takes of p at once, without waiting.
func (s *stdio) WriteNow(p []byte) int {
	if s.writeNow == nil {
		return 0
	}
	return s.writeNow(p)
}

// Close closes stdin and, when it is this process's own, stdout.
func (s *stdio) Close() error {
	err := s.in.Close()
	if c, ok := s.out.(*os.File); ok && c != os.Stdout {
		c.Close()
	}
	return err
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("invalid log level %q", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
