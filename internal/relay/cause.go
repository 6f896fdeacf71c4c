package relay

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kind says who or what gave up on a call.
type Kind int

const (
	HostCancelled      Kind = iota + 1 // the host sent a cancellation
	HostDisconnected                   // the host's connection ended
	IdleTimeout                        // no progress for the idle interval
	HardTimeout                        // the hard maximum elapsed
	Stopping                           // mcpx is shutting down
	UserInterrupt                      // a person pressed Ctrl-C
	ClientDisconnected                 // a local API client went away
	JobCancelled                       // someone cancelled the job the call had become
	LeaseLost                          // the replica running the job lost its lease on it
)

var kindNames = map[Kind]string{
	HostCancelled: "host_cancelled", HostDisconnected: "host_disconnected",
	IdleTimeout: "idle_timeout", HardTimeout: "hard_timeout", Stopping: "stopping",
	UserInterrupt: "user_interrupt", ClientDisconnected: "client_disconnected",
	JobCancelled: "job_cancelled", LeaseLost: "lease_lost",
}

// String returns the kind's snake_case name, as used in error data.
func (k Kind) String() string { return kindNames[k] }

// Cause is the context.Cause of a call that did not end with its own result.
// Its message is the reason sent upstream.
type Cause struct {
	Kind   Kind
	After  time.Duration // for timeouts: the interval that elapsed
	Detail string        // for HostCancelled: the host's own reason; for ClientDisconnected: the client's name; for JobCancelled: who cancelled; for LeaseLost: why
}

func (c *Cause) Error() string {
	switch c.Kind {
	case HostCancelled:
		if c.Detail != "" {
			return "cancelled by the host: " + c.Detail
		}
		return "cancelled by the host"
	case HostDisconnected:
		return "the host disconnected"
	case IdleTimeout:
		return "idle timeout: no progress for " + FormatDuration(c.After)
	case HardTimeout:
		return "hard maximum of " + FormatDuration(c.After) + " reached"
	case Stopping:
		return "mcpx is stopping"
	case UserInterrupt:
		return "interrupted by user"
	case ClientDisconnected:
		if c.Detail != "" {
			return "the client disconnected (" + c.Detail + ")"
		}
		return "the client disconnected"
	case JobCancelled:
		if c.Detail != "" {
			return "job cancelled with " + c.Detail
		}
		return "job cancelled"
	case LeaseLost:
		why := "the job store did not answer in time"
		if c.Detail != "" {
			why = c.Detail
		}
		return "this mcpx lost its lease on the job (" + why + "): the call may run again elsewhere"
	}
	return "cancelled"
}

// Answered reports whether the host still expects an answer to a call that
// ended this way: not when it cancelled or left.
func (c *Cause) Answered() bool {
	switch c.Kind {
	case HostCancelled, HostDisconnected, ClientDisconnected:
		return false
	}
	return true
}

// CauseOf returns err's *Cause, if it has one.
func CauseOf(err error) (*Cause, bool) {
	switch c := err.(type) {
	case nil:
		return nil, false // a live call's context.Cause, checked per message
	case *Cause:
		return c, true
	}
	var c *Cause
	ok := errors.As(err, &c)
	return c, ok
}

// Reason is the cancellation reason sent upstream for err.
func Reason(err error) string {
	if err == nil {
		return "cancelled"
	}
	return err.Error()
}

// FormatDuration prints d for people: 30s, 1m, 1m30s, 1.5s, 250ms, 2h.
func FormatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		s := strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
		return strings.TrimRight(strings.TrimRight(s, "0"), ".") + "s"
	}
	d = d.Round(time.Second)
	h, m, s := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	var b strings.Builder
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if s > 0 {
		fmt.Fprintf(&b, "%ds", s)
	}
	return b.String()
}
