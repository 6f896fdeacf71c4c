package sandbox

import (
	"errors"
	"fmt"
	"time"
)

// Limits bound one script. Zero fields take the defaults of
// [DefaultLimits].
type Limits struct {
	// CPU is the CPU time the child may use running the script.
	CPU time.Duration `json:"cpu,omitempty"`
	// MaxCalls is how many host calls the script may make in all.
	MaxCalls int `json:"maxCalls,omitempty"`
	// MaxConcurrent is how many host calls may be in flight at once;
	// calls beyond it wait, in order, for one to end.
	MaxConcurrent int `json:"maxConcurrent,omitempty"`
	// MaxOutputBytes bounds the console output kept; what is logged
	// beyond it is dropped and a line says so.
	MaxOutputBytes int `json:"maxOutputBytes,omitempty"`
	// MaxResultBytes bounds the script's value as JSON.
	MaxResultBytes int `json:"maxResultBytes,omitempty"`
	// MaxTimers bounds the timers pending at once.
	MaxTimers int `json:"maxTimers,omitempty"`
	// MaxMessageBytes bounds one message the script sends its host, as
	// JSON: a host call with its parameters, a notification with its
	// data. One past it throws in the script, and is never sent. The
	// parent reads no line of the child longer than the larger of this
	// and MaxResultBytes, plus room for the message around them
	// ([Limits.lineLimit]): it stops the script at one, having held no
	// more than that.
	MaxMessageBytes int `json:"maxMessageBytes,omitempty"`
}

// DefaultLimits are the limits of a script that sets none.
var DefaultLimits = Limits{
	CPU:             30 * time.Second,
	MaxCalls:        1000,
	MaxConcurrent:   8,
	MaxOutputBytes:  64 << 10,
	MaxResultBytes:  1 << 20,
	MaxTimers:       1000,
	MaxMessageBytes: 1 << 20,
}

// DefaultMemory is a child's memory limit when the pool sets none.
const DefaultMemory = 256 << 20

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	setIf(&d.CPU, l.CPU)
	setIf(&d.MaxCalls, l.MaxCalls)
	setIf(&d.MaxConcurrent, l.MaxConcurrent)
	setIf(&d.MaxOutputBytes, l.MaxOutputBytes)
	setIf(&d.MaxResultBytes, l.MaxResultBytes)
	setIf(&d.MaxTimers, l.MaxTimers)
	setIf(&d.MaxMessageBytes, l.MaxMessageBytes)
	return d
}

// envelope is the room a line has beyond the message or result it
// carries: its other fields, a failure's message (cut to maxFailBytes).
const envelope = 64 << 10

// lineLimit is the longest line the child may send the parent.
func (l Limits) lineLimit() int { return max(l.MaxMessageBytes, l.MaxResultBytes) + envelope }

// setIf sets *dst to v when v is set: above zero.
func setIf[T int | time.Duration](dst *T, v T) {
	if v > 0 {
		*dst = v
	}
}

// Names of limits, as a *LimitError carries them.
const (
	LimitMemory = "memory"
	LimitCPU    = "cpu"
	LimitResult = "result size"
	// LimitMessage is a line of the child past [Limits.lineLimit]: a child
	// that does not check its messages is stopped by the parent.
	LimitMessage = "message size"
)

// LimitError is a script stopped by one of its limits.
type LimitError struct {
	Limit  string // LimitMemory, LimitCPU, LimitResult, LimitMessage
	Detail string // the limit's value, for people
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("the script exceeded its %s limit (%s)", e.Limit, e.Detail)
}

// ScriptError is a script that failed on its own: it threw, or did not
// compile, or awaited something nothing will settle.
type ScriptError struct {
	Message string // with the script's stack, when it threw
	Syntax  bool   // it did not compile
}

func (e *ScriptError) Error() string { return e.Message }

// ErrChildFailed is wrapped by the error of a child that ended without
// answering for a reason other than its limits.
var ErrChildFailed = errors.New("the script's process failed")

// mib prints a byte count for people.
func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
