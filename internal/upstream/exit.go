package upstream

import (
	"errors"
	"fmt"
)

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

// stoppedError is an ErrStopped that says, alone, why mcpx stopped the
// upstream ("server %q was removed from the config").
type stoppedError struct{ msg string }

func (e *stoppedError) Error() string        { return e.msg }
func (e *stoppedError) Is(target error) bool { return target == ErrStopped }
