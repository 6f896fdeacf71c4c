package upstream

import (
	"sync"
	"time"
)

// Malformed lines are logged as stderr lines are: the first
// malformedPerWindow of a window whole, the rest only counted; the count
// is logged when the first line of a later window comes, or the
// connection ends. An upstream printing garbage thus writes a few lines a
// window to the log, not one per line (which would rotate the daemon's
// own lines away).
const (
	malformedPerWindow = 10
	malformedWindow    = 10 * time.Second
)

// malformedLog counts one connection's malformed lines.
type malformedLog struct {
	mu         sync.Mutex
	window     time.Time
	logged     int
	suppressed int
}

// note counts a malformed line seen at now: log says whether to log it,
// and more how many lines before it were counted and not logged (to be
// said first).
func (m *malformedLog) note(now time.Time) (more int, log bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.Sub(m.window) >= malformedWindow {
		more = m.suppressed
		m.window, m.logged, m.suppressed = now, 1, 0
		return more, true
	}
	if m.logged < malformedPerWindow {
		m.logged++
		return 0, true
	}
	m.suppressed++
	return 0, false
}

// flush returns the lines counted and not logged yet, and forgets them.
func (m *malformedLog) flush() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.suppressed
	m.suppressed = 0
	return n
}

// logMalformedSuppressed says how many malformed lines were not logged.
func (c *Conn) logMalformedSuppressed(n int) {
	if n > 0 {
		c.log.Warn("upstream malformed messages not logged (rate limit)", "server", c.server, "count", n)
	}
}
