package supervise

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/config"
)

// The supervisor (shim.go) and the reaper (reap.go), on real processes.
// The test binary doubles as the shim (main_test.go).

// testShim runs upstreams under the test binary as their shim.
func testShim(t *testing.T) *Options {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &Options{Shim: exe}
}

// supervisionModes are the two ways a pool may run an upstream.
func supervisionModes(t *testing.T) map[string]*Options {
	return map[string]*Options{"shim": testShim(t), "direct": nil}
}

// startSh starts `sh -c script` as an upstream and stops it (if it still
// runs) at the end of the test.
func startSh(t *testing.T, sup *Options, script string) *Process {
	t.Helper()
	p, err := Start(&config.Server{Name: "t", Command: "sh", Args: []string{"-c", script}}, sup)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, p.Stdout) }()
	go func() { _, _ = io.Copy(io.Discard, p.Stderr) }()
	t.Cleanup(func() {
		p.Stop(100 * time.Millisecond)
		p.Stdout.Close()
		p.Stderr.Close()
	})
	return p
}

// tagOf returns the tag of p's tree.
func tagOf(t *testing.T, p *Process) string {
	t.Helper()
	for _, kv := range p.cmd.Env {
		if v, ok := strings.CutPrefix(kv, tagEnv+"="); ok {
			return v
		}
	}
	t.Fatalf("no %s in the upstream's environment", tagEnv)
	return ""
}

// tagged returns the live processes carrying tag.
func tagged(t *testing.T, tag string) []procInfo {
	t.Helper()
	procs, err := listProcs()
	if err != nil {
		t.Fatal(err)
	}
	var out []procInfo
	for _, p := range procs {
		if !p.zombie() && procEnvHas(p.pid, tagEnv+"="+tag) {
			out = append(out, p)
		}
	}
	return out
}

// waitTagged waits until at least n processes carry tag, and returns them.
func waitTagged(t *testing.T, tag string, n int) []procInfo {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := tagged(t, tag)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes carry the tag, want %d: %v", len(got), n, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// noneLeft checks that no live process carries tag, within d.
func noneLeft(t *testing.T, tag string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := tagged(t, tag)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes of the upstream left after %s: %+v", len(left), d, left)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitDone waits for p to end.
func waitDone(t *testing.T, p *Process, d time.Duration) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("the upstream did not end within %s", d)
	}
}

// TestShimExitStatus: under the shim, an upstream's exit status reads
// exactly as without one: its code, or the signal that killed it.
func TestShimExitStatus(t *testing.T) {
	cases := []struct{ script, want string }{
		{"exit 0", "exit status 0"},
		{"exit 3", "exit status 3"},
		{"exit 255", "exit status 255"},
		{"kill -TERM $$", "signal: terminated"},
		{"kill -INT $$", "signal: interrupt"},
		{"kill -USR1 $$", "signal: user defined signal 1"},
		{"kill -KILL $$", "signal: killed"},
		{"ulimit -c 0; kill -SEGV $$", "signal: segmentation fault"},
		{"ulimit -c 0; kill -ABRT $$", "signal: aborted"},
	}
	for _, c := range cases {
		for mode, sup := range supervisionModes(t) {
			t.Run(mode+"/"+c.script, func(t *testing.T) {
				p := startSh(t, sup, c.script)
				waitDone(t, p, 10*time.Second)
				if got := p.ExitStatus(); got != c.want {
					t.Errorf("exit status %q, want %q", got, c.want)
				}
			})
		}
	}
}

// TestShimGracefulStop: the spec's shutdown works through the shim: an
// upstream that ends on EOF ends at once, one that ends on SIGTERM after
// the first grace, one that ignores both is killed after the second; each
// with its true exit status, and nothing of its tree is left once stop
// returns.
func TestShimGracefulStop(t *testing.T) {
	const grace = 300 * time.Millisecond
	cases := []struct {
		name, script, want string
		min, max           time.Duration
	}{
		{"eof", "sleep 1000 & exec cat", "exit status 0", 0, grace - 50*time.Millisecond},
		{"sigterm", "sleep 1000 & trap 'exit 7' TERM; while :; do sleep 0.02; done", "exit status 7", grace, 2*grace + 200*time.Millisecond},
		{"stubborn", "trap '' TERM; sleep 1000 & while :; do sleep 0.02; done", "signal: killed", 2 * grace, 2*grace + shimKillWait},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := startSh(t, testShim(t), c.script)
			tag := tagOf(t, p)
			waitTagged(t, tag, 3) // shim, sh, sleep
			start := time.Now()
			p.Stop(grace)
			took := time.Since(start)
			t.Logf("%s: stopped in %s, %s", c.name, took.Round(time.Millisecond), p.ExitStatus())
			if got := p.ExitStatus(); got != c.want {
				t.Errorf("exit status %q, want %q", got, c.want)
			}
			if took < c.min || took > c.max {
				t.Errorf("stop took %s, want %s to %s", took, c.min, c.max)
			}
			noneLeft(t, tag, 0)
		})
	}
}

// TestShimKillsWhatTheUpstreamLeft: when the upstream exits, whatever it
// spawned dies with it at once, even what left its group and session
// (setsid) or was orphaned (a double fork): such orphans are re-parented
// to the shim, a subreaper, not to init.
func TestShimKillsWhatTheUpstreamLeft(t *testing.T) {
	p := startSh(t, testShim(t), "sleep 1000 & setsid sleep 1001 & (sleep 1002 &); read x; exit 5")
	tag := tagOf(t, p)
	deadline := time.Now().Add(10 * time.Second)
	for escaped := false; !escaped; {
		procs := waitTagged(t, tag, 5) // shim, sh, three sleeps
		for _, q := range procs {
			escaped = escaped || q.pgid != p.PID()
		}
		if !escaped && time.Now().After(deadline) {
			t.Fatalf("no process left the upstream's group: %+v", procs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.Stdin.Close()
	waitDone(t, p, 10*time.Second)
	if got := p.ExitStatus(); got != "exit status 5" {
		t.Errorf("exit status %q, want \"exit status 5\"", got)
	}
	noneLeft(t, tag, 0) // the shim exits only once its tree is gone
}

// TestShimControlPipe: closing the control pipe (what the kernel does when
// mcpx dies, whatever way) kills the upstream's whole tree at once.
func TestShimControlPipe(t *testing.T) {
	p := startSh(t, testShim(t), "trap '' TERM HUP INT; sleep 1000 & setsid sleep 1001 & exec sleep 1002")
	tag := tagOf(t, p)
	waitTagged(t, tag, 4)
	start := time.Now()
	p.closeCtrl()
	waitDone(t, p, 5*time.Second)
	t.Logf("tree killed %s after the control pipe closed: %s", time.Since(start).Round(time.Millisecond), p.ExitStatus())
	noneLeft(t, tag, 0)
	if got := p.ExitStatus(); got != "signal: killed" {
		t.Errorf("exit status %q, want the upstream's \"signal: killed\"", got)
	}
}

// TestShimIgnoresSignalsWhileMcpxLives: signals that reach the shim while
// mcpx lives (a parent-death signal fired because a thread of mcpx ended,
// the upstream's own kill 0, a stray kill) neither end the shim nor reach
// the upstream through it.
func TestShimIgnoresSignalsWhileMcpxLives(t *testing.T) {
	p := startSh(t, testShim(t), "exec cat")
	tag := tagOf(t, p)
	procs := waitTagged(t, tag, 2)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGPIPE, syscall.SIGALRM, syscall.SIGTSTP, syscall.SIGABRT} {
		if err := syscall.Kill(p.PID(), sig); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	select {
	case <-p.done:
		t.Fatalf("the shim ended: %s", p.ExitStatus())
	default:
	}
	if st, _ := readProc(p.PID()); st.state == 'T' {
		t.Errorf("the shim is stopped")
	}
	if got := tagged(t, tag); len(got) != len(procs) {
		t.Errorf("processes after the signals: %+v, want %+v", got, procs)
	}
	p.Stdin.Close()
	waitDone(t, p, 5*time.Second)
	if got := p.ExitStatus(); got != "exit status 0" {
		t.Errorf("exit status %q, want \"exit status 0\"", got)
	}
}

// TestShimPassesStdio: the upstream's stdin, stdout and stderr are mcpx's
// pipes themselves, not copies through the shim, and the shim keeps no
// copy of stdin or stdout (so the upstream's end of either is its own).
func TestShimPassesStdio(t *testing.T) {
	p := startSh(t, testShim(t), "exec cat")
	tag := tagOf(t, p)
	var child int
	deadline := time.Now().Add(10 * time.Second)
	for child == 0 {
		for _, q := range tagged(t, tag) {
			if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", q.pid)); q.ppid == p.PID() && string(comm) == "cat\n" {
				child = q.pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the upstream did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	link := func(pid, fd int) string {
		s, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	self := os.Getpid()
	// mcpx's ends: the other ends of the same pipes.
	for fd, mine := range map[int]*os.File{0: p.Stdin, 1: p.Stdout, 2: p.Stderr} {
		want := link(self, int(mine.Fd()))
		if got := link(child, fd); got != want {
			t.Errorf("upstream fd %d is %s, want mcpx's pipe %s", fd, got, want)
		}
	}
	for fd := range 2 {
		if got := link(p.PID(), fd); strings.HasPrefix(got, "pipe:") {
			t.Errorf("the shim holds the upstream's fd %d (%s)", fd, got)
		}
	}
	// The control pipe is the shim's alone.
	ctrl := link(p.PID(), ctrlFD)
	// The upstream's own descriptors come and go while it starts (the
	// dynamic loader opens and closes its libraries): one that is gone by
	// the time it is read is not the control pipe.
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", child))
	for _, f := range fds {
		s, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", child, f.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if s == ctrl {
			t.Errorf("the upstream holds the shim's control pipe as fd %s", f.Name())
		}
	}
}

// TestParentDeathSignalFollowsThread shows the caveat of the parent-death
// signal (it fires when the forking thread exits, not the process) and
// that Start is immune: it forks on a thread that lives as long as
// the child, whatever thread asked for the start.
func TestParentDeathSignalFollowsThread(t *testing.T) {
	// On a thread that then exits: the child dies though mcpx lives. (Go
	// keeps the main thread instead of ending it: if the goroutine ran
	// there, try again.)
	shown := false
	for try := 0; try < 10 && !shown; try++ {
		cmdc := make(chan *exec.Cmd)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			cmd := exec.Command("sleep", "1000")
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			if err := cmd.Start(); err != nil {
				t.Error(err)
			}
			cmdc <- cmd
		}()
		cmd := <-cmdc
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		select {
		case err := <-waited:
			if err == nil || !strings.Contains(err.Error(), "killed") {
				t.Fatalf("a child forked on a thread that exited: %v, want killed by its parent-death signal", err)
			}
			t.Logf("a child forked on a thread that then exited was killed by its parent-death signal: %v", err)
			shown = true
		case <-time.After(500 * time.Millisecond):
			_ = cmd.Process.Kill()
			<-waited
		}
	}
	if !shown {
		t.Logf("the forking thread never exited: the caveat was not shown")
	}

	for mode, sup := range supervisionModes(t) {
		t.Run(mode, func(t *testing.T) {
			pc := make(chan *Process, 1)
			go func() {
				runtime.LockOSThread()
				p, err := Start(&config.Server{Name: "t", Command: "sh", Args: []string{"-c", "exec cat"}}, sup)
				if err != nil {
					t.Error(err)
				}
				pc <- p
			}()
			p := <-pc
			if p == nil {
				return
			}
			defer func() { p.Stdout.Close(); p.Stderr.Close() }()
			time.Sleep(200 * time.Millisecond)
			select {
			case <-p.done:
				t.Fatalf("the upstream died when the thread that asked for it exited: %s", p.ExitStatus())
			default:
			}
			p.Stop(time.Second)
			if got := p.ExitStatus(); got != "exit status 0" {
				t.Errorf("exit status %q, want \"exit status 0\"", got)
			}
		})
	}
}

// TestShimStartFailure: a command that cannot run fails the start, with
// the same error with or without a shim.
func TestShimStartFailure(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]*config.Server{
		"not in PATH":    {Name: "t", Command: "no-such-command-mcpx"},
		"no such file":   {Name: "t", Command: filepath.Join(dir, "no-such-command")},
		"not executable": {Name: "t", Command: notExec},
		"bad cwd":        {Name: "t", Command: "sh", Cwd: "/no/such/dir"},
	}
	for name, srv := range cases {
		t.Run(name, func(t *testing.T) {
			errs := map[string]string{}
			for mode, sup := range supervisionModes(t) {
				_, err := Start(srv, sup)
				if err == nil {
					t.Fatalf("%s: started", mode)
				}
				errs[mode] = err.Error()
			}
			if errs["shim"] != errs["direct"] {
				t.Errorf("with a shim: %s\nwithout: %s", errs["shim"], errs["direct"])
			}
			t.Logf("%s", errs["shim"])
		})
	}
}

// TestParseStat: command names with spaces and parentheses.
func TestParseStat(t *testing.T) {
	line := "1234 (my (odd) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 98765 1000 100 18446744073709551615"
	p, err := parseStat(1234, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if p != (procInfo{pid: 1234, ppid: 1, pgid: 1234, sid: 1234, state: 'S', start: 98765}) {
		t.Errorf("parsed %+v", p)
	}
	self, err := readProc(os.Getpid())
	if err != nil || self.ppid != os.Getppid() || self.start == 0 {
		t.Errorf("this process: %+v, %v", self, err)
	}
}

// mergeEnv never returns nil, which exec would read as "inherit mcpx's
// environment": a clean environment with nothing to add stays empty.
func TestMergeEnvNeverNil(t *testing.T) {
	if env := mergeEnv(nil, nil); env == nil || len(env) != 0 {
		t.Fatalf("mergeEnv(nil, nil) = %#v, want an empty, non-nil slice", env)
	}
	got := mergeEnv([]string{"A=1", "B=2"}, map[string]string{"B": "3", "C": "4"})
	if want := []string{"A=1", "B=3", "C=4"}; !slices.Equal(got, want) {
		t.Fatalf("mergeEnv = %v, want %v", got, want)
	}
}
