package supervise

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"mcpx/internal/config"
)

// Process is one upstream child: its own process group, stdin and stdout
// as pipes, stderr to the log. Under a supervisor (shim.go) the child is
// the shim, leader of the upstream's process group.
type Process struct {
	cmd    *exec.Cmd
	Stdin  *os.File // the child's stdin; Stop closes it
	Stdout *os.File // the child's stdout; the caller reads and closes it
	Stderr *os.File // the child's stderr; the caller reads and closes it
	// ctrl is mcpx's end of the shim's control pipe; closing it has the
	// shim kill the upstream's whole tree. nil without a shim.
	ctrl     *os.File
	ctrlOnce sync.Once
	done     chan struct{} // closed when the child has been waited for
	err      error         // its exit status, after done
	// cgroup is the cgroup the child started in (cgroup.go), "" if none:
	// what is left in it dies once the child has been reaped.
	cgroup string
}

// Start spawns srv's command, under the shim of sup if it names
// one. The caller owns the returned pipes' read ends.
func Start(srv *config.Server, sup *Options) (*Process, error) {
	if sup == nil {
		sup = &Options{}
	}
	// Resolved here, in mcpx's environment, as without a shim.
	cmd := exec.Command(srv.Command, srv.Args...)
	if cmd.Err != nil {
		return nil, fmt.Errorf("starting %q: %w", srv.Command, cmd.Err)
	}
	tag := newTag()
	base := os.Environ()
	if sup.CleanEnv {
		base = nil
	}
	cmd.Env = mergeEnv(base, withTag(srv.Env, tag))
	cmd.Dir = srv.Cwd
	var ctrlR, ctrlW, repR, repW *os.File
	target := cmd.Path
	if sup.Shim != "" {
		var err error
		if ctrlR, ctrlW, err = os.Pipe(); err != nil {
			return nil, err
		}
		defer ctrlR.Close()
		if repR, repW, err = os.Pipe(); err != nil {
			ctrlW.Close()
			return nil, err
		}
		defer repR.Close()
		defer repW.Close()
		// mcpx shim PARENT PATH ARGV0 ARGS...: the shim executes the path
		// resolved here, relative paths from the same directory.
		cmd.Args = append([]string{"mcpx", ShimVerb, strconv.Itoa(os.Getpid()), target, srv.Command}, srv.Args...)
		cmd.Path = sup.Shim
		cmd.ExtraFiles = []*os.File{ctrlR, repW} // fds 3 and 4
		cmd.SysProcAttr = &syscall.SysProcAttr{
			// The upstream's own group, which everything it spawns
			// inherits, in mcpx's session: a session of its own is a
			// scheduling group of its own where Linux groups sessions
			// (autogroup), and a call's every hand-off between mcpx and
			// the upstream then waits on the scheduler across groups
			// (bench -paths relay-se,inproc-se under load).
			Setpgid: true,
			// A hint only (the pipe is the signal): see shim.go.
			Pdeathsig: syscall.SIGTERM,
		}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{
			// Its own group, so that stopping it reaches whatever it spawned.
			Setpgid: true,
			// Dies with mcpx even on SIGKILL (its children do not).
			Pdeathsig: syscall.SIGKILL,
		}
	}
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		closeAll(ctrlW)
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(ctrlW, inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(ctrlW, inR, inW, outR, outW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	p := &Process{cmd: cmd, Stdin: inW, Stdout: outR, Stderr: errR, ctrl: ctrlW, done: make(chan struct{})}
	if cg, fd := newCgroup(tag); fd >= 0 {
		// Born in it: no descendant can leave it.
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		p.cgroup = cg
		defer syscall.Close(fd)
	}
	var rec *record
	if sup.Records != "" {
		rec = &record{Boot: bootID(), Tag: tag, Owner: os.Getpid(), OwnerStart: selfStart(), Server: srv.Name, Command: srv.Command, Cgroup: p.cgroup}
	}
	started := make(chan error, 1)
	go p.run(started, sup.Records, rec)
	err = <-started
	if err != nil && p.cgroup != "" {
		os.Remove(p.cgroup)
	}
	// The child has its own copies now (or failed to start).
	closeAll(inR, outW, errW)
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Path == sup.Shim {
		pe.Path = target // as without a shim (a bad cwd fails the shim's start)
	}
	if err == nil && repR != nil {
		repW.Close()
		if err = shimReport(repR, target); err != nil {
			p.forceKill() // it exits at once, unless it hangs
		}
	}
	if err != nil {
		closeAll(ctrlW, inW, outR, errR)
		return nil, fmt.Errorf("starting %q: %w", srv.Command, err)
	}
	return p, nil
}

// shimStartWait bounds how long a shim may take to start its upstream.
const shimStartWait = 30 * time.Second

// shimReport reads whether the shim started the upstream at path: nil, or
// the error the start would have had without a shim.
func shimReport(r *os.File, path string) error {
	_ = r.SetReadDeadline(time.Now().Add(shimStartWait))
	b, err := io.ReadAll(io.LimitReader(r, 256))
	report := strings.TrimSpace(string(b))
	if report == "ok" {
		return nil
	}
	if n, ok := strings.CutPrefix(report, "errno "); ok {
		if errno, err := strconv.Atoi(n); err == nil {
			return &os.PathError{Op: "fork/exec", Path: path, Err: syscall.Errno(errno)}
		}
	}
	if err == nil {
		err = errors.New("it ended before starting the upstream")
	}
	return fmt.Errorf("the upstream's supervisor failed: %w", err)
}

// run starts the child and waits for it, on a goroutine locked to its OS
// thread from before the start until the child has been reaped. The
// parent-death signal is tied to the thread that forks the child, and Go
// ends a thread only when a goroutine locked to it exits; so this thread
// lives as long as the child, and the signal fires only when mcpx itself
// dies. (Under a shim the control pipe is the signal and the shim checks
// any death signal against its real parent; this makes the signal exact
// all the same, and without a shim it is the only one.) Blocked in wait,
// the thread costs nothing a waiting child did not cost before. If rec is
// not nil, the child is recorded in dir while it lives.
func (p *Process) run(started chan<- error, dir string, rec *record) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := p.cmd.Start(); err != nil {
		started <- err
		return
	}
	recPath := ""
	if rec != nil {
		rec.PID = p.cmd.Process.Pid
		// A start time of 0 (it exited already) matches no live process.
		rec.Start = procStart(rec.PID)
		recPath, _ = writeRecord(dir, rec)
	}
	started <- nil
	p.err = p.cmd.Wait()
	p.closeCtrl()
	clean := true
	if p.cgroup != "" {
		// What the child left running, however far it strayed.
		_, clean = killCgroup(p.cgroup, 0, 2*time.Second)
	}
	if recPath != "" && clean {
		os.Remove(recPath) // else the next mcpx's Reap finishes the job
	}
	close(p.done)
}

// withTag returns env with tagEnv set to tag.
func withTag(env map[string]string, tag string) map[string]string {
	out := make(map[string]string, len(env)+1)
	for k, v := range env {
		out[k] = v
	}
	out[tagEnv] = tag
	return out
}

// Wait waits until the child has exited and been reaped.
func (p *Process) Wait() { <-p.done }

// Done is closed when the child has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// PID is the child's process id: the shim's under a shim.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// ExitStatus describes how the child ended, once Done is closed.
func (p *Process) ExitStatus() string {
	if p.err == nil {
		return "exit status 0"
	}
	return p.err.Error()
}

// State is how the child ended (the shim's end under a shim), once Done
// is closed.
func (p *Process) State() *os.ProcessState { return p.cmd.ProcessState }

// signalGroup signals the child's whole process group.
func (p *Process) signalGroup(sig syscall.Signal) {
	// The group id is the child's pid (Setpgid). ESRCH means it is gone.
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
}

func (p *Process) closeCtrl() {
	p.ctrlOnce.Do(func() {
		if p.ctrl != nil {
			p.ctrl.Close()
		}
	})
}

// shimKillWait is how long the shim may take to kill an upstream's tree
// when told to, before mcpx kills the group itself.
const shimKillWait = time.Second

// Kill ends the child and everything it spawned now, without waiting.
func (p *Process) Kill() {
	if p.ctrl == nil {
		p.signalGroup(syscall.SIGKILL)
		return
	}
	p.closeCtrl() // the shim kills the tree, then exits
	time.AfterFunc(shimKillWait, func() {
		select {
		case <-p.done:
		default:
			p.signalGroup(syscall.SIGKILL)
		}
	})
}

// Stop ends the child as the spec's stdio shutdown says: close its stdin,
// wait, SIGTERM, wait, SIGKILL. It returns when the child has exited;
// whatever else is left in its group is killed too.
func (p *Process) Stop(grace time.Duration) {
	p.Stdin.Close()
	select {
	case <-p.done:
	case <-time.After(grace):
		p.signalGroup(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			p.forceKill()
		}
	}
	if p.ctrl == nil {
		// Children of the child that outlived it. (A shim exits only
		// once its whole tree is gone.)
		p.signalGroup(syscall.SIGKILL)
	}
}

// forceKill kills the child and its tree and waits for the child.
func (p *Process) forceKill() {
	if p.ctrl != nil {
		p.closeCtrl()
		select {
		case <-p.done:
			return
		case <-time.After(shimKillWait):
		}
	}
	p.signalGroup(syscall.SIGKILL)
	<-p.done
}

// mergeEnv returns base with extra's variables set, replacing any earlier
// value of the same name, in a stable order. The result is never nil: a
// nil Env would make exec inherit mcpx's whole environment, which a clean
// environment (CleanEnv) must not.
func mergeEnv(base []string, extra map[string]string) []string {
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		name := kv
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				name = kv[:i]
				break
			}
		}
		if _, ok := extra[name]; !ok {
			out = append(out, kv)
		}
	}
	names := make([]string, 0, len(extra))
	for k := range extra {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out = append(out, k+"="+extra[k])
	}
	return out
}
