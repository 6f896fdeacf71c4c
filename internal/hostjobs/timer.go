package hostjobs

import (
	"time"

	"mcpx/internal/hostprofile"
)

// A call that would outlive its host's hard timer becomes a job this long
// before the timer fires: a fifth of the timer, at most 5 s. The host must
// have the answer in hand before its timer fires, across its own
// scheduling and the transport.
const maxMargin = 5 * time.Second

// Margin returns how long before a timer of t the call becomes a job.
func Margin(t time.Duration) time.Duration { return min(t/5, maxMargin) }

// Timer returns how long a host with profile p waits for a call
// whatever happens, 0 if it has no such timer: a timer progress does not
// reset, or one it would but the host gave no progress token to carry
// progress.
func Timer(p hostprofile.Profile, hasToken bool) time.Duration {
	if p.Timeout <= 0 || p.ResetOnProgress && hasToken {
		return 0
	}
	return p.Timeout
}

// AnswerWindow is how long mcpx may keep a host whose hard timer is timer
// (0: none) waiting on a job: up to the margin before that timer, else
// maxWait.
func AnswerWindow(timer time.Duration) time.Duration {
	if timer > 0 {
		return timer - Margin(timer)
	}
	return maxWait
}

// maxWait is the longest mcpx_job waits for a host with no hard timer.
const maxWait = 60 * time.Second
