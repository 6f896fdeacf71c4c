package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The start of a detached daemon is reported to the `mcpx daemon
// --background` that spawned it over a pipe, whose write end the daemon
// gets as the file descriptor readyEnv names: one line, readyLine once it
// serves, runningLine when another daemon holds the config's lock, else
// its start error. So the CLI that needs a daemon returns when it serves,
// and prints why at once when it cannot start.
const (
	readyEnv    = "MCPX_DAEMON_READY_FD"
	readyLine   = "ready"
	runningLine = "running"
)

// readyTimeout bounds how long `daemon --background` waits for the
// daemon's word (opening a shared store may take a while).
const readyTimeout = 30 * time.Second

// readyPipe is the write end of the pipe of a daemon started by
// `daemon --background`; nil for one started otherwise.
type readyPipe struct{ f *os.File }

// takeReadyPipe takes the pipe named in the environment, and removes the
// name so that no upstream inherits it.
func takeReadyPipe(env *Env) *readyPipe {
	v, ok := env.LookupEnv(readyEnv)
	if !ok {
		return nil
	}
	os.Unsetenv(readyEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil
	}
	syscall.CloseOnExec(fd)
	return &readyPipe{os.NewFile(uintptr(fd), "daemon-ready")}
}

// say writes line and closes the pipe; later calls do nothing.
func (p *readyPipe) say(line string) {
	if p == nil || p.f == nil {
		return
	}
	fmt.Fprintln(p.f, strings.ReplaceAll(line, "\n", " "))
	p.f.Close()
	p.f = nil
}

// done reports how the daemon's start went: err nil once it serves.
func (p *readyPipe) done(err error) {
	switch {
	case err == nil:
		p.say(readyLine)
	case errors.Is(err, ErrDaemonRunning):
		p.say(runningLine)
	default:
		p.say(err.Error())
	}
}

// awaitReady reads the daemon's word from r: nil once it serves or when
// another daemon runs, else its start error.
func awaitReady(r *os.File, log string) error {
	defer r.Close()
	r.SetReadDeadline(time.Now().Add(readyTimeout))
	line, err := bufio.NewReader(r).ReadString('\n')
	line = strings.TrimSpace(line)
	switch {
	case line == readyLine || line == runningLine:
		return nil
	case line != "":
		return fmt.Errorf("the daemon did not start: %s (log: %s)", line, log)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("the daemon did not start serving within %s (see %s)", readyTimeout, log)
	default:
		return fmt.Errorf("the daemon exited as it started (see %s)", log)
	}
}
