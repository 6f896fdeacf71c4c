package upstream

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"syscall"
	"time"

	"mcpx/internal/config"
)

// process is one upstream child: its own process group, stdin and stdout
// as pipes, stderr to the log.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	stderr *os.File
	done   chan struct{} // closed when the child has been waited for
	err    error         // its exit status, after done
}

// startProcess spawns srv's command. The caller owns the returned pipes'
// read ends and must call wait exactly once.
func startProcess(srv *config.Server) (*process, error) {
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = mergeEnv(os.Environ(), srv.Env)
	cmd.Dir = srv.Cwd
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Its own group, so that stopping it reaches whatever it spawned.
		Setpgid: true,
		// Dies with mcpx even on SIGKILL.
		Pdeathsig: syscall.SIGKILL,
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	// The child has its own copies now (or failed to start).
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("starting %q: %w", srv.Command, err)
	}
	return &process{cmd: cmd, stdin: inW, stdout: outR, stderr: errR, done: make(chan struct{})}, nil
}

// wait waits for the child and records its exit status.
func (p *process) wait() {
	p.err = p.cmd.Wait()
	close(p.done)
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// exitStatus describes how the child ended, once done is closed.
func (p *process) exitStatus() string {
	if p.err == nil {
		return "exit status 0"
	}
	return p.err.Error()
}

// signalGroup signals the child's whole process group.
func (p *process) signalGroup(sig syscall.Signal) {
	// The group id is the child's pid (Setpgid). ESRCH means it is gone.
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
}

// stop ends the child as the spec's stdio shutdown says: close its stdin,
// wait, SIGTERM, wait, SIGKILL. It returns when the child has exited;
// whatever else is left in its group is killed too.
func (p *process) stop(grace time.Duration) {
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(grace):
		p.signalGroup(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			p.signalGroup(syscall.SIGKILL)
			<-p.done
		}
	}
	// Children of the child that outlived it.
	p.signalGroup(syscall.SIGKILL)
}

// mergeEnv returns base with extra's variables set, replacing any earlier
// value of the same name, in a stable order.
func mergeEnv(base []string, extra map[string]string) []string {
	if len(extra) == 0 {
		return base
	}
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

// ExitError is the error of calls whose upstream process ended under them.
type ExitError struct {
	Server string
	Status string // "exit status 3", "signal: killed", or why the link broke
	Stderr string // the last lines it wrote to stderr, if any
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("upstream %q exited (%s)", e.Server, e.Status)
	if e.Stderr != "" {
		msg += "; its last stderr: " + e.Stderr
	}
	return msg
}

// ErrStopped is returned for calls on an upstream mcpx stopped itself.
var ErrStopped = errors.New("upstream stopped")
