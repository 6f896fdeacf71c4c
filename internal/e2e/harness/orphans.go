package harness

import (
	"strconv"
)

// No orphans: whatever way mcpx ends, SIGKILL included, no process it
// started (nor any they started) outlives it by more than 2 s. The
// upstreams here are `sh -c 'sleep 1003 & exec FIXTURE'` running the
// "family" fixture, which adds a child in its group, one that leaves its
// session (setsid) and an orphan (double fork): six processes each with
// mcpx's supervisor. Every one of them carries an environment variable
// unique to the test, the surest trace there is.

// OrphanTagEnv names the variable that marks a test's upstream processes.
const OrphanTagEnv = "MCPX_ORPHAN_TEST"

// EscapeeMark is the argument that marks the escapee of tag's family (an
// extra fraction of a second for sleep to add): with its environment
// cleared, its arguments are its only trace.
func EscapeeMark(tag string) string {
	n, _ := strconv.ParseUint(tag[:min(len(tag), 12)], 16, 64)
	return "0." + strconv.FormatUint(n, 10)
}
