package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/cli"
	"mcpx/internal/config"
	"mcpx/internal/daemon"
	"mcpx/internal/localclient"
	"mcpx/internal/mcpxtest"
)

// mode is how a live test runs the CLI and its daemon.
type mode string

const (
	// spawned runs the built mcpx binary, which starts its own daemon.
	spawned mode = "spawned"
	// inProcess runs daemon.Run and cli.Run inside the test process, so
	// the race detector sees both sides.
	inProcess mode = "in-process"
)

// inProcessBuild is the build the in-process CLI and daemon agree on; it
// keys their socket apart from any spawned daemon's.
const inProcessBuild = "cli-test-in-process"

// forEachMode runs f as a subtest per mode.
func forEachMode(t *testing.T, f func(t *testing.T, m mode)) {
	for _, m := range []mode{spawned, inProcess} {
		t.Run(string(m), func(t *testing.T) { f(t, m) })
	}
}

// gateway is one test's mcpx: a private installation whose config has one
// demo upstream, "demo", and the CLI in one mode.
type gateway struct {
	t    *testing.T
	e    *mcpxtest.Env
	mode mode
	cfg  string // the config file

	// In-process only: the daemon's files, its end and its log.
	files      config.DaemonFiles
	daemonDone chan error
	stopDaemon context.CancelFunc
	daemonLog  *syncBuffer
}

// newGateway makes a gateway. In-process, it starts the daemon unless
// noDaemon; spawned, the first verb that needs one starts it.
func newGateway(t *testing.T, m mode, noDaemon bool) *gateway {
	t.Helper()
	e := mcpxtest.NewEnv(t)
	g := &gateway{t: t, e: e, mode: m, cfg: e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})}
	if m == inProcess {
		cfg := e.LoadConfig(g.cfg)
		paths, err := config.DefaultPaths(g.getenv)
		if err != nil {
			t.Fatal(err)
		}
		g.files = paths.Daemon(cfg.File, inProcessBuild)
		if !noDaemon {
			g.startDaemon(cfg)
		}
	}
	return g
}

func (g *gateway) getenv(k string) string {
	v, _ := g.e.Lookup(k)
	return v
}

// startDaemon runs daemon.Run in the test process on the socket the
// in-process CLI computes, and waits until it answers.
func (g *gateway) startDaemon(cfg *config.Config) {
	t := g.t
	t.Helper()
	g.daemonLog = &syncBuffer{}
	log := slog.New(slog.NewTextHandler(g.daemonLog, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	g.stopDaemon, g.daemonDone = cancel, make(chan error, 1)
	go func() {
		g.daemonDone <- daemon.Run(ctx, &daemon.Options{Config: cfg, Version: "test", Logger: log, Files: g.files})
	}()
	t.Cleanup(func() {
		cancel()
		if err := g.waitDaemon(20 * time.Second); err != nil {
			t.Errorf("daemon.Run: %v", err)
		}
		if t.Failed() {
			t.Logf("in-process daemon log:\n%s", g.daemonLog.String())
		}
	})
	c := &localclient.Client{Socket: g.files.Socket, Version: "test"}
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Status(ctx)
		cancel()
		if err == nil {
			return
		}
		select {
		case err := <-g.daemonDone:
			g.daemonDone <- err
			t.Fatalf("daemon.Run returned before answering: %v\n%s", err, g.daemonLog.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the in-process daemon did not answer within 15s: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitDaemon waits for the in-process daemon's Run to return, and returns
// what it returned. It may be called more than once.
func (g *gateway) waitDaemon(timeout time.Duration) error {
	select {
	case err := <-g.daemonDone:
		g.daemonDone <- err
		return err
	case <-time.After(timeout):
		return fmt.Errorf("did not return within %s", timeout)
	}
}

// args returns verb, --config, the gateway's config, then rest.
func (g *gateway) args(verb string, rest ...string) []string {
	return append([]string{verb, "--config", g.cfg}, rest...)
}

// cliEnv is the in-process CLI's environment. It cannot start a daemon:
// Executable does not exist, so a CLI that missed the in-process daemon
// fails instead of quietly starting a spawned one.
func (g *gateway) cliEnv(stdout, stderr *syncBuffer) *cli.Env {
	return &cli.Env{
		Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr,
		LookupEnv: g.e.Lookup,
		Version:   "test", Build: inProcessBuild, Executable: "/nonexistent/mcpx",
	}
}

// run runs the CLI to its end within timeout and returns its output and
// exit code.
func (g *gateway) run(timeout time.Duration, args ...string) (stdout, stderr string, code int) {
	g.t.Helper()
	r := g.start(args...)
	code = r.wait(timeout)
	return r.stdout.String(), r.stderr.String(), code
}

// running is a CLI command in flight.
type running struct {
	t              *testing.T
	args           []string
	stdout, stderr *syncBuffer
	done           chan int // the exit code
	interrupt      func()   // Ctrl-C: SIGINT, or the cancelled context
	code           int
	ended          bool
}

// start starts the CLI with args. At cleanup a command still running is
// killed (spawned) or cancelled (in-process) and waited for.
func (g *gateway) start(args ...string) *running {
	t := g.t
	t.Helper()
	r := &running{t: t, args: args, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan int, 1)}
	switch g.mode {
	case spawned:
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := g.e.Command(ctx, args...)
		cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		r.interrupt = func() {
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Errorf("sending SIGINT: %v", err)
			}
		}
		go func() {
			err := cmd.Wait()
			cancel()
			code := 0
			var ee *exec.ExitError
			switch {
			case errors.As(err, &ee):
				code = ee.ExitCode()
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					// Killed by a signal it did not handle: not an exit
					// code of mcpx's, so never 130.
					code = -int(ws.Signal())
					fmt.Fprintf(r.stderr, "\n[test: mcpx was killed by %v]\n", ws.Signal())
				}
			case err != nil:
				code = -1
				fmt.Fprintf(r.stderr, "\n[test: waiting for mcpx: %v]\n", err)
			}
			r.done <- code
		}()
		t.Cleanup(func() {
			if !r.ended {
				cmd.Process.Kill()
				<-r.done
			}
		})
	case inProcess:
		ctx, cancel := context.WithCancel(context.Background())
		env := g.cliEnv(r.stdout, r.stderr)
		r.interrupt = cancel
		go func() { r.done <- cli.Run(ctx, args, env) }()
		t.Cleanup(func() {
			cancel()
			if !r.ended {
				select {
				case <-r.done:
				case <-time.After(20 * time.Second):
					t.Errorf("mcpx %s did not return within 20s of its context ending", strings.Join(args, " "))
				}
			}
		})
	}
	return r
}

// wait waits for the command's end and returns its exit code; the test
// fails if it takes longer than timeout.
func (r *running) wait(timeout time.Duration) int {
	r.t.Helper()
	if r.ended {
		return r.code
	}
	select {
	case r.code = <-r.done:
		r.ended = true
		return r.code
	case <-time.After(timeout):
		r.t.Fatalf("mcpx %s did not end within %s\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), timeout, r.stdout, r.stderr)
		return 0
	}
}

// waitStderr waits until stderr contains s.
func (r *running) waitStderr(s string, timeout time.Duration) {
	r.t.Helper()
	if !r.stderr.waitFor(s, timeout) {
		r.t.Fatalf("mcpx %s: no %q on stderr within %s\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), s, timeout, r.stdout, r.stderr)
	}
}

// status runs "mcpx status --json" and decodes it.
func (g *gateway) status() *apitype.Status {
	g.t.Helper()
	out, errb, code := g.run(30*time.Second, g.args("status", "--json")...)
	if code != 0 {
		g.t.Fatalf("mcpx status --json: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	var st apitype.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		g.t.Fatalf("mcpx status --json printed %q: %v", out, err)
	}
	return &st
}

// syncBuffer is a bytes.Buffer safe for concurrent use that can wait for
// what it receives.
type syncBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	wake chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor reports whether the buffer holds sub within timeout.
func (s *syncBuffer) waitFor(sub string, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		if strings.Contains(s.b.String(), sub) {
			s.mu.Unlock()
			return true
		}
		if s.wake == nil {
			s.wake = make(chan struct{})
		}
		wake := s.wake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-deadline.C:
			return false
		}
	}
}

// processState returns the state letter of pid from /proc ("R", "S", "Z",
// ...), or "" when there is no such process.
func processState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// pid (comm) state ...; comm may hold spaces and parentheses.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return "?"
}
