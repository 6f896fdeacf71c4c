package harness

import (
	"testing"
	"time"
)

// WaitUntil polls ok until it holds, failing the test after d: the wait
// for an event a test can only see by looking (a process gone, a status
// line, a record), never a pause of a guessed length.
func WaitUntil(t testing.TB, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, d)
		}
	}
}
