package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

var errHostGone = errors.New("the host cancelled")

// TestStopInterruptsBusyLoop: a tight loop stops when ctx ends, with ctx's
// cause.
func TestStopInterruptsBusyLoop(t *testing.T) {
	p := testPool(t, 0)
	ctx, cancel := context.WithCancelCause(context.Background())
	h := &testHost{}
	done := make(chan error, 1)
	go func() {
		_, err := p.Exec(ctx, Script{Code: `console.log("spinning"); while (true) {}`, Prelude: prelude}, h)
		done <- err
	}()
	waitFor(t, func() bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.lines) > 0 })
	cancel(errHostGone)
	select {
	case err := <-done:
		if !errors.Is(err, errHostGone) {
			t.Errorf("error %v, want the cause", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not stop")
	}
}

// TestStopCancelsCalls: every host call in flight is cancelled with ctx's
// cause when ctx ends, and with EndCause when the script ends first.
func TestStopCancelsCalls(t *testing.T) {
	p := testPool(t, 0)
	ctx, cancel := context.WithCancelCause(context.Background())
	h := &testHost{started: make(chan struct{}, 8)}
	done := make(chan error, 1)
	go func() {
		_, err := p.Exec(ctx, Script{Code: `await Promise.all([1,2,3,4].map(() => call("block")))`, Prelude: prelude}, h)
		done <- err
	}()
	for range 4 {
		<-h.started
	}
	cancel(errHostGone)
	if err := <-done; !errors.Is(err, errHostGone) {
		t.Errorf("error %v", err)
	}
	if len(h.causes) != 4 {
		t.Fatalf("%d calls saw their cancel, want 4", len(h.causes))
	}
	for _, c := range h.causes {
		if !errors.Is(c, errHostGone) {
			t.Errorf("a call's cause %v", c)
		}
	}

	end := errors.New("script x ended")
	h = &testHost{started: make(chan struct{}, 8)}
	res, err := p.Exec(context.Background(), Script{Code: `call("block"); call("block"); await sleep(1); return 7`, Prelude: prelude, EndCause: end}, h)
	if err != nil || string(res.Value) != "7" {
		t.Fatalf("%s, %v", res.Value, err)
	}
	if len(h.causes) != 2 || !errors.Is(h.causes[0], end) || !errors.Is(h.causes[1], end) {
		t.Errorf("calls left running at the end saw %v, want the end cause", h.causes)
	}
}

func TestCPULimit(t *testing.T) {
	p := testPool(t, 0)
	_, _, err := run(t, p, `while (true) {}`, Limits{CPU: 200 * time.Millisecond})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitCPU || !strings.Contains(err.Error(), "cpu limit (200ms)") {
		t.Errorf("error %v, want the CPU limit", err)
	}
}

func TestMemoryLimit(t *testing.T) {
	p := testPool(t, 64<<20)
	for _, code := range []string{
		`const a = []; while (true) a.push(new Array(100000).fill(1.5));`,
		`let s = "x"; const keep = []; while (true) { s = s + s; keep.push(s + "y"); }`,
	} {
		start := time.Now()
		_, _, err := run(t, p, code, Limits{})
		t.Logf("%s: stopped after %v", code, time.Since(start)) // under the race detector, seconds
		var le *LimitError
		if !errors.As(err, &le) || le.Limit != LimitMemory || !strings.Contains(err.Error(), "memory limit (64 MiB)") {
			t.Errorf("%s: error %v, want the memory limit", code, err)
		}
	}
	// The pool serves the next script as before.
	res, _, err := run(t, p, `return 1 + 1`, Limits{})
	if err != nil || string(res.Value) != "2" {
		t.Errorf("after the bombs: %s, %v", res.Value, err)
	}
}

// TestKernelKillIsMemory: a child killed with SIGKILL by someone other
// than the parent (the kernel's OOM killer) reports the memory limit.
func TestKernelKillIsMemory(t *testing.T) {
	p := testPool(t, 0)
	c, err := spawn(p.exe, p.mem)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(c.sp.PID(), syscall.SIGKILL)
	err = c.deathError(p.mem, DefaultLimits)
	c.end(time.Second)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitMemory {
		t.Errorf("error %v, want the memory limit", err)
	}
}

func TestWarmPool(t *testing.T) {
	p := testPool(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- p.Run(ctx) }()
	// No child is started before the first script asks for one.
	select {
	case c := <-p.warm:
		t.Errorf("a warm child (pid %d) before any script", c.sp.PID())
	case <-time.After(200 * time.Millisecond):
	}
	for i := range 2 {
		res, _, err := run(t, p, `return 3`, Limits{})
		if err != nil || string(res.Value) != "3" {
			t.Errorf("script %d: %s, %v", i, res.Value, err)
		}
		waitFor(t, func() bool { return len(p.warm) == cap(p.warm) })
	}
	// Idle names the warm children (status reads their memory).
	idle := p.Idle()
	if len(idle) != cap(p.warm) {
		t.Errorf("Idle %v, want the %d warm children", idle, cap(p.warm))
	}
	for _, pid := range idle {
		if err := syscall.Kill(pid, 0); err != nil {
			t.Errorf("Idle names pid %d: %v", pid, err)
		}
	}
	cancel()
	if err := <-ran; err != nil {
		t.Error(err)
	}
	if len(p.warm) != 0 || len(p.Idle()) != 0 {
		t.Errorf("%d warm children left after Run (Idle %v)", len(p.warm), p.Idle())
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestChildSupervised: the child leads a process group of its own (so a
// kill reaches whatever it might start) and has no environment of mcpx's:
// GOMAXPROCS and supervise's tag, nothing else.
func TestChildSupervised(t *testing.T) {
	t.Setenv("MCPX_SANDBOX_LEAK", "secret")
	p := testPool(t, 0)
	c, err := spawn(p.exe, p.mem)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.kill(); c.end(time.Second) }()
	pid := c.sp.PID()
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		t.Errorf("the child's process group is %d (%v), want its own, %d", pgid, err, pid)
	}
	// Read once the child runs its own program: between fork and the end
	// of its execve the file can read empty (the old image is gone, the
	// new one not yet set up), and no environment mcpx gives is empty.
	var env []byte
	for deadline := time.Now().Add(10 * time.Second); len(env) == 0; time.Sleep(time.Millisecond) {
		var err error
		if env, err = os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the child's environment stayed empty")
		}
	}
	var names []string
	for kv := range strings.SplitSeq(strings.TrimRight(string(env), "\x00"), "\x00") {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	if want := []string{"GOMAXPROCS", "MCPX_UPSTREAM"}; !slices.Equal(names, want) {
		t.Errorf("the child's environment has %q, want %q", names, want)
	}
}
