// Package hostprofile says how long a host waits for a tool call and
// whether progress resets its timer.
package hostprofile

import "time"

// Profile is one host's tool-call timer.
type Profile struct {
	Name string
	// Timeout is how long the host waits for a tool call; 0 means it has
	// no timer.
	Timeout time.Duration
	// ResetOnProgress: a progress notification restarts the host's timer.
	ResetOnProgress bool
	// Source says where the profile came from.
	Source string
}
