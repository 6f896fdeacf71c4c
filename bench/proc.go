package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is a child process of the bench, in a process group of its own so
// that it is stopped with everything it started.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// procs are every process the bench started, for the final cleanup.
var (
	procsMu sync.Mutex
	procs   []*proc
)

// spawn starts argv with env (nil: the bench's own) in dir. Its stderr
// (and stdout, unless the caller takes it) go to logDir/name.log.
// stdinPipe and stdoutPipe ask for pipes.
type spawnOpts struct {
	env        []string
	stdinPipe  bool
	stdoutPipe bool
}

type spawned struct {
	*proc
	stdin  io.WriteCloser
	stdout io.Reader
}

func spawn(logDir, name string, argv []string, o spawnOpts) (*spawned, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = o.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logf, err := os.OpenFile(filepath.Join(logDir, logName(name)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	s := &spawned{proc: &proc{name: name, cmd: cmd, done: make(chan struct{})}}
	if o.stdinPipe {
		if s.stdin, err = cmd.StdinPipe(); err != nil {
			return nil, err
		}
	}
	if o.stdoutPipe {
		if s.stdout, err = cmd.StdoutPipe(); err != nil {
			return nil, err
		}
	} else {
		cmd.Stdout = logf
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() {
		s.err = cmd.Wait()
		logf.Close()
		close(s.done)
	}()
	procsMu.Lock()
	procs = append(procs, s.proc)
	procsMu.Unlock()
	return s, nil
}

func logName(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == '>' {
			return '_'
		}
		return r
	}, name) + ".log"
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *proc) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
		<-p.done
	}
	// Whatever it left in its group.
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
}

// stopAll stops every process the bench started, newest first.
func stopAll() {
	procsMu.Lock()
	ps := append([]*proc(nil), procs...)
	procsMu.Unlock()
	var wg sync.WaitGroup
	for i := len(ps) - 1; i >= 0; i-- {
		wg.Go(func() { ps[i].stop(8 * time.Second) })
	}
	wg.Wait()
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat times.
var clockTicks = func() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		return 100
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || n <= 0 {
		return 100
	}
	return float64(n)
}()

// cpuTime returns the user+system CPU time of pid so far, from
// /proc/<pid>/stat (utime and stime, every thread).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// After the comm: state is field 3, utime field 14, stime field 15.
	if len(f) < 13 {
		return 0, errors.New("short stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed stat times")
	}
	return time.Duration(float64(u+s) / clockTicks * float64(time.Second)), nil
}

// cpuOf sums cpuTime over pids; a process that has gone counts 0.
func cpuOf(pids []int) time.Duration {
	var sum time.Duration
	for _, p := range pids {
		if d, err := cpuTime(p); err == nil {
			sum += d
		}
	}
	return sum
}

// memory is a process's resident set, from /proc/<pid>/status.
type memory struct {
	RSS  int64 // VmRSS, bytes
	Peak int64 // VmHWM, bytes
}

func memOf(pid int) (memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	defer f.Close()
	var m memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fs := strings.Fields(v)
		if len(fs) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(fs[0], 10, 64)
		switch k {
		case "VmRSS":
			m.RSS = n << 10
		case "VmHWM":
			m.Peak = n << 10
		}
	}
	return m, sc.Err()
}

// selfCPU is the bench's own user and system time: on a path's timed
// phase, what its host spent (nothing else of the bench runs then).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// upstreamPIDs are the processes of the upstream behind p, wherever it
// was started: the demo fixture recording to p's record, or p's
// server-everything. The gateway's pids are left out (the bare relay's
// command line holds the upstream's), and so is mcpx's supervising shim,
// whose command line ends with the upstream's: the upstream's own argv[1]
// is demo, or server-everything's script.
func upstreamPIDs(p *path, gateway []int) []int {
	want, first := "\x00-record\x00"+p.record+"\x00", "demo\x00"
	switch {
	case p.everything:
		want, first = "\x00"+strings.Join(p.upArgv, "\x00")+"\x00", p.upArgv[0]+"\x00"
	case p.record == "":
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || slices.Contains(gateway, pid) {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(append(cmd, 0), []byte(want)) && bytes.HasPrefix(argv1(cmd), []byte(first)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// argv1 is a /proc cmdline from its second argument on.
func argv1(cmdline []byte) []byte {
	_, rest, _ := bytes.Cut(cmdline, []byte{0})
	return rest
}
