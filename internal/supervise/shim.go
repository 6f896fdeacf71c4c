package supervise

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The supervisor ("shim") between mcpx and each stdio upstream.
//
// Process groups and a parent-death signal on the upstream alone cannot
// keep the promise that mcpx leaves no process behind: the signal reaches
// the direct child only, so an upstream's own children (npx -> node,
// sh -> server) outlive a daemon killed with SIGKILL. So each upstream runs
// under a tiny supervisor of mcpx's own, the mcpx executable re-run as
// `mcpx shim PARENT PATH ARGV0 ARGS...`, which
//
//   - runs in a process group of its own, made by mcpx, in mcpx's
//     session: the upstream and everything it spawns start in it, and
//     mcpx's graceful stop signals the whole group as before. Not in a
//     session of its own: where Linux schedules each session as a group
//     of its own (autogroup), the upstream would be scheduled apart from
//     mcpx, and every hand-off of a call between them would wait on it.
//     It gives up the session's controlling terminal, if any, before it
//     starts the upstream, which so has none, as in a session of its own;
//   - is the child subreaper of that tree (PR_SET_CHILD_SUBREAPER): a
//     descendant whose parent exits is re-parented to the shim, never to
//     init, so it stays findable even if it left the group and session;
//   - tells mcpx, on a second pipe (fd 4), whether the upstream started,
//     so that a command that cannot run fails to start as without a shim;
//   - passes its stdin, stdout and stderr to the upstream as they are (the
//     same pipes: no copying, nothing on the data path) and keeps no copy
//     of stdin or stdout itself, so the upstream's end of input and output
//     are exactly the upstream's;
//   - learns that mcpx is gone from a control pipe (fd 3) whose only write
//     end mcpx holds, close-on-exec: the kernel closes it whatever way mcpx
//     ends, SIGKILL included, and the shim's read returns. This is the
//     primary signal. A parent-death signal (SIGTERM) is the second; the
//     shim believes it only if its parent really changed (see below);
//   - then kills the whole tree with SIGKILL: every descendant (by parent
//     links, which subreaping keeps intact) and every member of its group,
//     round after round until none is left, and exits;
//   - does the same when the upstream exits (whatever it left running dies
//     with it), and then exits with the upstream's exit code, or by the
//     signal that killed it, so that mcpx reports the exit status as it
//     was.
//
// Parent-death signals and threads: PR_SET_PDEATHSIG fires when the thread
// that forked the child exits, not the process. Go may fork from any
// thread, and a thread ends when a goroutine locked to it exits. So:
//
//   - mcpx does not rely on the shim's death signal: the control pipe is
//     process-wide, and a death signal that fires early (the forking
//     thread of a live mcpx ended) is recognised as such, because the
//     shim's parent is still mcpx (getppid returns the process, and the
//     shim is re-parented to another thread of it). The shim checks its
//     parent against the pid mcpx passed on every catchable signal.
//   - the shim forks the upstream (with a SIGKILL death signal, for the
//     case where the shim itself is killed with SIGKILL) from its main
//     goroutine locked to its thread; that goroutine never returns (the
//     shim ends with os.Exit), so the thread never exits before the
//     process.
//
// The shim catches (and ignores while mcpx lives) every signal whose
// default would end or stop it: signals mcpx sends the group during a
// graceful stop, or the upstream sends its own group (kill 0), reach the
// upstream directly and must not take the supervisor down first.

// ShimVerb is the hidden first argument that makes the mcpx executable the
// supervisor: cmd/mcpx hands the rest of the command line to [RunShim].
const ShimVerb = "shim"

// ctrlFD is the shim's end of its control pipe; reportFD is where it
// tells mcpx whether the upstream started ("ok", or the errno of the
// failed exec), so that a start fails in mcpx exactly as without a shim.
const (
	ctrlFD   = 3
	reportFD = 4
)

// tagEnv names the variable every process of one supervised upstream
// inherits, with a value unique to it: a trace that survives every change
// of parent, group and session, for the reaper (reap.go).
const tagEnv = "MCPX_UPSTREAM"

// RunShim supervises one upstream: args are the pid of mcpx, the
// upstream's executable, its argv[0] and its arguments. It returns only on
// a usage error; otherwise the process exits as the upstream did.
func RunShim(args []string) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "mcpx shim: internal command: mcpx shim PARENT PATH ARGV0 [ARGS...]")
		return 2
	}
	parent, err := strconv.Atoi(args[0])
	if err != nil || parent <= 0 {
		fmt.Fprintf(os.Stderr, "mcpx shim: bad parent pid %q\n", args[0])
		return 2
	}
	var st unix.Stat_t
	if unix.Fstat(ctrlFD, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		fmt.Fprintln(os.Stderr, "mcpx shim: no control pipe on fd 3 (this command is internal to mcpx)")
		return 2
	}
	syscall.CloseOnExec(ctrlFD) // not the upstream's
	ctrl := os.NewFile(ctrlFD, "mcpx-ctrl")
	var report *os.File
	if unix.Fstat(reportFD, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO {
		syscall.CloseOnExec(reportFD)
		report = os.NewFile(reportFD, "mcpx-report")
	}

	// The upstream's death signal belongs to this thread (see above).
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		// Without it, orphans still die by session and group.
		fmt.Fprintf(os.Stderr, "mcpx shim: cannot become a subreaper: %v\n", err)
	}
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, catchable()...)
	if os.Getppid() != parent {
		return 1 // mcpx is gone already; nothing was started
	}
	self := os.Getpid()
	dropTerminal()

	child, err := syscall.ForkExec(args[1], args[2:], &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		var errno syscall.Errno
		if report != nil && errors.As(err, &errno) {
			fmt.Fprintf(report, "errno %d\n", int(errno))
		} else {
			fmt.Fprintf(os.Stderr, "mcpx shim: starting %s: %v\n", args[2], err)
		}
		if errors.Is(err, syscall.ENOENT) {
			return 127
		}
		return 126
	}
	if report != nil {
		fmt.Fprintln(report, "ok")
		report.Close()
	}
	// The upstream alone holds its stdin and stdout now.
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		_ = unix.Dup3(int(null.Fd()), 0, 0)
		_ = unix.Dup3(int(null.Fd()), 1, 0)
		null.Close()
	}

	exits := make(chan reaped, 64)
	go reapChildren(exits)
	gone := make(chan struct{})
	go func() {
		var b [64]byte
		for {
			if _, err := ctrl.Read(b[:]); err != nil {
				close(gone)
				return
			}
		}
	}()

	for {
		select {
		case r, ok := <-exits:
			if ok && r.pid != child {
				continue // an orphan re-parented to the shim, reaped
			}
			// The upstream exited: so does whatever it left running.
			killTree(self)
			drain(exits, time.Second)
			if !ok {
				os.Exit(1) // not reached: the upstream is a child until reaped
			}
			exitAs(r.status)
		case <-gone:
		case <-sigs:
			if os.Getppid() == parent {
				continue // a graceful stop's signal to the group, or the upstream's own
			}
		}
		// mcpx is gone, or closed the pipe to say "kill it now".
		killTree(self)
		status, ok := await(exits, child, time.Second)
		if !ok {
			os.Exit(128 + int(syscall.SIGKILL))
		}
		exitAs(status)
	}
}

// dropTerminal gives up the controlling terminal of mcpx's session, if it
// has one, for the shim and so for everything it starts, as a session of
// its own would: an upstream that opens /dev/tty (a password prompt) fails
// at once instead of stopping on SIGTTIN in a background group. The shim
// leads no session, so the terminal and its foreground group are not told.
func dropTerminal() {
	fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return // none
	}
	_ = unix.IoctlSetInt(fd, unix.TIOCNOTTY, 0)
	_ = unix.Close(fd)
}

// catchable lists the signals the shim catches: all whose default would
// end or stop it, except those ignored when it started (they stay ignored,
// for the upstream too, as a direct child would have them).
func catchable() []os.Signal {
	var out []os.Signal
	for s := syscall.Signal(1); s <= 64; s++ {
		switch s {
		case syscall.SIGKILL, syscall.SIGSTOP, // cannot be caught
			syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL, syscall.SIGTRAP, // the runtime's
			syscall.SIGCHLD, syscall.SIGURG, syscall.SIGWINCH, syscall.SIGCONT, // ignored by default
			32, 33: // the C library's
			continue
		}
		if !signal.Ignored(s) {
			out = append(out, s)
		}
	}
	return out
}

// reaped is one child the shim has waited for.
type reaped struct {
	pid    int
	status syscall.WaitStatus
}

// reapChildren waits for every child of the shim (the upstream, and the
// orphans re-parented to it) and reports each; it closes out when the shim
// has no child left.
func reapChildren(out chan<- reaped) {
	defer close(out)
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		out <- reaped{pid, ws}
	}
}

// drain consumes exits until they end (no child left) or d has passed, so
// that the shim leaves no zombie to init.
func drain(exits <-chan reaped, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case _, ok := <-exits:
			if !ok {
				return
			}
		case <-t.C:
			return
		}
	}
}

// await waits up to d for the exit of child, draining the others.
func await(exits <-chan reaped, child int, d time.Duration) (syscall.WaitStatus, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case r, ok := <-exits:
			if !ok {
				return 0, false
			}
			if r.pid == child {
				drain(exits, 200*time.Millisecond)
				return r.status, true
			}
		case <-t.C:
			return 0, false
		}
	}
}

// killTree kills every process of the supervised tree: the shim's
// descendants, and every other member of its group.
func killTree(self int) {
	killAll(func() []int {
		procs, err := listProcs()
		if err != nil {
			return nil
		}
		return treeOf(procs, self, func(p procInfo) bool {
			return p.pid == self || p.pgid == self
		})
	}, 5*time.Second)
	if cg := selfCgroupIfOurs(); cg != "" {
		// What left the tree and its group: still in the cgroup.
		// Then the shim leaves it and removes it, as no one else may
		// (mcpx may be gone).
		if _, clean := killCgroup(cg, self, 2*time.Second); clean {
			leaveCgroup(cg, self)
		}
	}
}

// exitAs ends the shim as the upstream ended: with its exit code, or by
// the same signal (without a core dump of the shim).
func exitAs(ws syscall.WaitStatus) {
	switch {
	case ws.Exited():
		os.Exit(ws.ExitStatus())
	case ws.Signaled():
		sig := ws.Signal()
		// The default action, not the Go runtime's handler.
		var dfl [4]uint64 // struct sigaction, all zero: SIG_DFL, no flags
		_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
		var set unix.Sigset_t
		set.Val[(sig-1)/64] |= 1 << ((uint(sig) - 1) % 64)
		_ = unix.PthreadSigmask(unix.SIG_UNBLOCK, &set, nil)
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
		_ = unix.Tgkill(os.Getpid(), unix.Gettid(), sig)
		time.Sleep(time.Second) // not reached: the signal ends the process
		os.Exit(128 + int(sig))
	}
	os.Exit(1)
}
