package harness

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/demo"
)

// The demos here speak the legacy eras only, so that each start is one
// initialize in their records.
//
// The life of an upstream between calls: stopped when idle (and not
// started again by a listing), started eagerly, restarted after crashes
// with a growing wait.

// UpstreamProcs counts the live processes whose command line holds s.
func UpstreamProcs(t testing.TB, s string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(cmdline), s) {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && strings.Contains(string(stat), ") Z ") {
			continue // exited, not yet reaped
		}
		n++
	}
	return n
}

// ProcAlive reports whether pid runs (a zombie does not).
func ProcAlive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesized command name.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
		return false
	}
	return true
}

// WaitProcs waits until want processes hold s in their command line.
func WaitProcs(t testing.TB, s string, want int, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		got := UpstreamProcs(t, s)
		if got == want {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("%d processes hold %q, want %d after %s", got, s, want, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func CountEvents(evs []demo.Event, kind string) int {
	n := 0
	for _, ev := range evs {
		if ev.Event == kind {
			n++
		}
	}
	return n
}
