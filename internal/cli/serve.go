package cli

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"syscall"

	"mcpx/internal/localclient"
)

func cmdServe() *command {
	var configPath string
	var inProcess bool
	var logLevel string
	return &command{
		name:  "serve",
		short: "serve MCP to a host on stdin/stdout (what a host's config runs)",
		long: `
Serve speaks MCP on stdin and stdout, every protocol revision, with the tools
of every configured upstream server. By default it forwards the host's stream
to the mcpx daemon for this config, starting the daemon if none runs, so that
every host on the machine shares one set of upstream processes. With
--in-process it runs everything itself and stops its upstreams when the host
leaves. Logs go to stderr.`,
		setFlags: func(fs *flag.FlagSet) {
			configFlag(fs, &configPath)
			fs.BoolVar(&inProcess, "in-process", false, "run the upstreams in this process instead of the shared daemon")
			fs.StringVar(&logLevel, "log-level", "warn", "stderr log `level`: debug, info, warn or error")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) > 0 {
				return usagef("unexpected argument %q", args[0])
			}
			log, err := newLogger(env.Stderr, logLevel)
			if err != nil {
				return err
			}
			cfg, paths, err := loadConfig(env, configPath)
			if err != nil {
				return err
			}
			stdio := newStdio(env)
			if inProcess {
				return env.ServeInProcess(ctx, cfg, stdio, log)
			}
			c, err := connect(ctx, env, cfg, paths)
			if err != nil {
				return err
			}
			stream, err := c.DialHost(ctx)
			if err != nil {
				return err
			}
			return forward(ctx, stdio, stream)
		},
	}
}

// forward copies the host's stream to the daemon and back until one side
// ends. The host closing stdin ends the host's session in the daemon (its
// calls are cancelled as "host disconnected").
func forward(ctx context.Context, host io.ReadWriteCloser, daemon *localclient.HostStream) error {
	up := make(chan error, 1)
	down := make(chan error, 1)
	go func() {
		_, err := io.Copy(daemon, host)
		daemon.CloseWrite()
		up <- err
	}()
	go func() {
		_, err := io.Copy(host, daemon)
		down <- err
	}()
	var err error
	select {
	case err = <-down:
		// The daemon ended the stream (it stopped, or the host left).
	case <-ctx.Done():
	}
	daemon.Close()
	host.Close()
	<-up
	if err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	if down != nil {
		select {
		case <-down:
		default:
		}
	}
	return nil
}

// stdio is this process's stdin and stdout as one connection. stdin is
// made non-blocking so that Close interrupts a pending Read.
type stdio struct {
	in  io.ReadCloser
	out io.Writer
}

func newStdio(env *Env) *stdio {
	if f, ok := env.Stdin.(*os.File); ok && f == os.Stdin {
		if err := syscall.SetNonblock(int(f.Fd()), true); err == nil {
			return &stdio{in: os.NewFile(f.Fd(), "stdin"), out: env.Stdout}
		}
	}
	return &stdio{in: io.NopCloser(env.Stdin), out: env.Stdout}
}

func (s *stdio) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s *stdio) Write(p []byte) (int, error) { return s.out.Write(p) }
func (s *stdio) Close() error                { return s.in.Close() }

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("invalid log level %q", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
