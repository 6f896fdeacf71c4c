package mcpxtest

import (
	"io"
	"strings"
	"sync"
	"testing"
)

// LogWriter returns a writer to t's log, for the log of a gateway (or
// the stderr of a process) that the test runs. What is written once the
// test has ended (its cleanups have run) is dropped: a timer of an
// in-process gateway may still fire then, and logging to a finished test
// is a data race, which parallel tests run into.
func LogWriter(t testing.TB) io.Writer {
	w := &logWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.ended = true
		w.mu.Unlock()
	})
	return w
}

type logWriter struct {
	t     testing.TB
	mu    sync.Mutex
	ended bool
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.ended {
		w.t.Logf("%s", strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}
