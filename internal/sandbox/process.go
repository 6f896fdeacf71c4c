package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/supervise"
)

// proc is one child process, from the parent's side.
type proc struct {
	sp     *supervise.Process
	msgs   chan *message // what the child says, closed at its stdout's end
	exited chan struct{} // closed once the child has been reaped and its output read
	stderr *tail

	// limit is the longest line read from the child: the script's
	// lineLimit, set before its run is sent (a warm child says nothing).
	limit atomic.Int64
	// tooLong is set, before msgs closes, when the child sent a line past
	// limit: the parent killed it then.
	tooLong atomic.Bool

	wmu    sync.Mutex
	killed bool // by the parent (guarded by wmu)
}

// spawn starts a child of exe with memory limit mem, supervised as an
// upstream is (its own process group, killed if mcpx dies). The child has
// an empty environment but for GOMAXPROCS=2 (and supervise's tag), and
// runs in /. Two Ps: the script runs on one and the reader of the
// parent's stop on the other, so a stop interrupts a tight loop at once;
// with one P the reader waited for the scheduler's preemption (a stop
// took 32 ms, not 1 ms: TestStopInterruptsBusyLoop's child, timed by
// hand).
func spawn(exe string, mem int64) (*proc, error) {
	sp, err := supervise.Start(&config.Server{
		Name:    "script",
		Command: exe,
		Args:    []string{ChildVerb, strconv.FormatInt(mem, 10)},
		Env:     map[string]string{"GOMAXPROCS": "2"},
		Cwd:     "/",
	}, &supervise.Options{CleanEnv: true})
	if err != nil {
		return nil, fmt.Errorf("starting the script's process: %w", err)
	}
	p := &proc{sp: sp, msgs: make(chan *message, 16), exited: make(chan struct{}), stderr: &tail{max: 4 << 10}}
	p.limit.Store(int64(DefaultLimits.lineLimit()))
	read, drained := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(drained)
		defer sp.Stderr.Close()
		// A healthy child writes nothing there: a small buffer, not
		// io.Copy's 32 KiB, saves that much per child (BenchmarkExecWarm's
		// B/op). The struct hides *os.File's WriteTo, which would bring
		// its own.
		io.CopyBuffer(p.stderr, struct{ io.Reader }{sp.Stderr}, make([]byte, 4<<10))
	}()
	go func() {
		defer close(read)
		defer close(p.msgs)
		defer sp.Stdout.Close()
		r := bufio.NewReaderSize(sp.Stdout, 64<<10)
		var buf []byte
		for {
			var err error
			buf, err = readLine(r, buf, func() int { return int(p.limit.Load()) })
			m := &message{}
			if err == nil {
				err = json.Unmarshal(buf, m)
			}
			if err != nil {
				if errors.Is(err, errLineTooLong) {
					p.tooLong.Store(true)
					p.kill()
				}
				if !errors.Is(err, io.EOF) {
					io.Copy(io.Discard, r) // a line that is not JSON, or too long: the child is broken; wait for its end
				}
				return
			}
			if cap(buf) > 64<<10 {
				buf = nil // not kept past a long line
			}
			p.msgs <- m
		}
	}()
	go func() {
		<-read
		<-drained
		sp.Wait()
		close(p.exited)
	}()
	return p, nil
}

// send writes m to the child; an error means the child is gone.
func (p *proc) send(m *message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, err = p.sp.Stdin.Write(append(b, '\n'))
	return err
}

// alive reports whether the child has not exited.
func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// end waits up to grace for the child to exit, kills it if it has not,
// and returns once it has been waited for and its output drained.
func (p *proc) end(grace time.Duration) {
	t := time.NewTimer(grace)
	defer t.Stop()
	msgs := p.msgs
	for {
		select {
		case _, ok := <-msgs:
			if !ok {
				msgs = nil // nobody listens any more: drained
			}
		case <-t.C:
			p.kill()
		case <-p.exited: // after msgs closed
			p.sp.Stdin.Close()
			return
		}
	}
}

// kill kills the child with SIGKILL.
func (p *proc) kill() {
	p.wmu.Lock()
	p.killed = true
	p.wmu.Unlock()
	p.sp.Kill()
	p.sp.Stdin.Close()
}

// deathError is why a child that ended without a done message did.
func (p *proc) deathError(mem int64, lim Limits) error {
	<-p.exited
	if p.tooLong.Load() {
		return &LimitError{Limit: LimitMessage, Detail: fmt.Sprintf("%d bytes", p.limit.Load())}
	}
	st := p.sp.State()
	p.wmu.Lock()
	killed := p.killed
	p.wmu.Unlock()
	var sig syscall.Signal
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() && !killed {
		sig = ws.Signal()
	}
	if err := deathLimit(sig, st.UserTime()+st.SystemTime(), p.stderr.head(), mem, lim); err != nil {
		return err
	}
	return fmt.Errorf("%w: %s%s", ErrChildFailed, st, p.stderr.suffix())
}

// deathLimit is the limit that ended a child the parent did not kill, if
// one did: sig is the signal that ended it (0: none, or the parent's),
// cpu the CPU time it used. SIGXCPU, or a SIGKILL after the child used
// its CPU limit (RLIMIT_CPU's hard limit, reached when the script was
// stuck where the watcher could not stop it), is the CPU limit; another
// SIGKILL (nothing else kills a child the parent did not: the kernel, out
// of memory) or the Go runtime running out of memory is the memory limit.
func deathLimit(sig syscall.Signal, cpu time.Duration, stderrHead string, mem int64, lim Limits) *LimitError {
	switch {
	case sig == syscall.SIGXCPU, sig == syscall.SIGKILL && cpu >= lim.CPU:
		return &LimitError{Limit: LimitCPU, Detail: lim.CPU.String()}
	case sig == syscall.SIGKILL, outOfMemory(stderrHead):
		return &LimitError{Limit: LimitMemory, Detail: mib(mem)}
	}
	return nil
}

// outOfMemory reports whether a child's stderr begins the way the Go
// runtime dies when it cannot get memory (under the RLIMIT_DATA backstop,
// mmap fails with ENOMEM): its "fatal error:" line, or the "runtime:" lines
// before it, name out of memory, "cannot allocate memory" (persistentalloc)
// or pages it could not map; or, in a cgo build, pthread_create could not
// map a new thread's stack (EAGAIN, then SIGABRT). Only the runtime's lines
// before the first goroutine's trace count: a panic's message or a trace
// may quote the script's own strings.
func outOfMemory(head string) bool {
	for line := range strings.Lines(head) {
		if strings.HasPrefix(line, "goroutine ") {
			break
		}
		if !strings.HasPrefix(line, "fatal error: ") && !strings.HasPrefix(line, "runtime: ") && !strings.HasPrefix(line, "runtime/cgo: ") {
			continue
		}
		for _, s := range oomWords {
			if strings.Contains(line, s) {
				return true
			}
		}
	}
	return false
}

var oomWords = []string{"out of memory", "cannot allocate memory", "cannot map pages", "errno=12", "pthread_create failed"}

// tail keeps the first and the last max bytes written to it: a Go runtime
// fatal error says why on its first lines and then dumps every goroutine's
// stack, far more than max.
type tail struct {
	mu    sync.Mutex
	max   int
	first []byte
	b     []byte // the last max bytes
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := min(t.max-len(t.first), len(p)); n > 0 {
		t.first = append(t.first, p[:n]...)
	}
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// head is the first max bytes written.
func (t *tail) head() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.first)
}

// suffix is the first line of what the child wrote on stderr, as ": line".
func (t *tail) suffix() string {
	s := strings.TrimSpace(t.head())
	if s == "" {
		return ""
	}
	line, _, _ := strings.Cut(s, "\n")
	return ": " + line
}
