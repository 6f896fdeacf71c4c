// Command mcpx is an MCP gateway: many upstream MCP servers behind one
// endpoint, with long-running tool calls done right. This file only wires:
// the CLI gets the daemon and the in-process core as functions.
package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"mcpx/internal/cli"
	"mcpx/internal/config"
	"mcpx/internal/daemon"
	"mcpx/internal/hosttoken"
	"mcpx/internal/sandbox"
	"mcpx/internal/supervise"
)

func main() {
	// The supervisor of one upstream and a script's process: hidden
	// verbs, before anything else.
	if len(os.Args) > 1 && os.Args[1] == supervise.ShimVerb {
		supervise.DropStartupPages()
		os.Exit(supervise.RunShim(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.ChildVerb {
		os.Exit(sandbox.RunChild(os.Args[2:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], env())
	stop()
	os.Exit(code)
}

// shim is the executable that supervises each upstream: this very build,
// even if its file has been replaced or removed since it started.
const shim = "/proc/self/exe"

func env() *cli.Env {
	exe, _ := os.Executable()
	build, _ := config.BuildID()
	v := version()
	return &cli.Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Version: v, Build: build, Executable: exe,
		RunDaemon: func(ctx context.Context, cfg *config.Config, files config.DaemonFiles, log *slog.Logger, ready func()) error {
			oneProc()
			supervise.DropStartupPages()
			err := daemon.Run(ctx, &daemon.Options{Config: cfg, Version: v, Logger: log, Files: files, Build: build, Shim: shim, Ready: ready, Idle: idle})
			if errors.Is(err, daemon.ErrRunning) {
				return errors.Join(cli.ErrDaemonRunning, err)
			}
			return err
		},
		ServeInProcess: func(ctx context.Context, cfg *config.Config, conn io.ReadWriteCloser, log *slog.Logger) error {
			supervise.DropStartupPages()
			return daemon.ServeStdio(ctx, &daemon.Options{Config: cfg, Version: v, Logger: log, Shim: shim, Files: jobFiles()}, conn)
		},
		LookInProcess: func(ctx context.Context, cfg *config.Config, conn io.ReadWriteCloser, log *slog.Logger) error {
			return daemon.ServeStdio(ctx, &daemon.Options{Config: cfg, Version: v, Logger: log, Shim: shim, LookOnly: true}, conn)
		},
		ServeHTTP: func(ctx context.Context, cfg *config.Config, ln net.Listener, tokens *hosttoken.HostTokens, log *slog.Logger) error {
			supervise.DropStartupPages()
			return daemon.ServeHTTP(ctx, &daemon.Options{Config: cfg, Version: v, Logger: log, Shim: shim, Files: jobFiles()}, ln, tokens)
		},
		SerialStdio: serialStdio,
		OpenSignIns: daemon.OpenSignIns,
		ReadCluster: daemon.ReadCluster,
		ProbeStore:  daemon.ProbeStore,
		WriteAudit:  daemon.WriteAudit,
	}
}

// jobFiles names the user's job store, for a gateway without a daemon;
// none if the state directory cannot be found.
func jobFiles() config.DaemonFiles {
	p, err := config.DefaultPaths(os.Getenv)
	if err != nil {
		return config.DaemonFiles{}
	}
	d := p.Daemon("", "")
	return config.DaemonFiles{Jobs: d.Jobs, JobsLock: d.JobsLock}
}

// serialStdio runs mcpx serve's stdio face (one host; in-process, or
// forwarding to the daemon) on one P: see oneProc.
func serialStdio() { oneProc() }

// oneProc sets GOMAXPROCS=1 unless the user set GOMAXPROCS: for mcpx serve's
// stdio face and for the daemon. mcpx's work on a message is a few
// microseconds that wake the next goroutine in line (reader, handler,
// writer); with a second P every such wake-up also wakes a second OS
// thread that finds nothing to do, and on a machine whose cores the hosts
// and the upstreams share that costs more CPU than the steps themselves.
// Saves CPU per call at no cost in latency (go run ./bench: the daemon
// and inproc paths' CPU per call; docs/benchmarks.md).
// The upstreams are processes of their own and keep every core (the
// setting is not inherited: it is not in the environment).
func oneProc() {
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		runtime.GOMAXPROCS(1)
	}
}

// version is the module version when built from a tagged module, else the
// VCS revision, else "dev".
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "dev-" + s.Value[:12]
		}
	}
	return "dev"
}

// idle gives back the executable's pages an idle daemon's work faulted
// in (they stay in the page cache). Not debug.FreeOSMemory as well: its
// forced collection left 0.5 MB more anonymous memory than the runtime's
// own scavenging.
func idle() { supervise.DropStartupPages() }
