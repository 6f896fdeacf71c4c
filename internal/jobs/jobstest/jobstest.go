// Package jobstest runs a jobs manager for tests of the packages built
// on jobs: over an SQLite store of its own, until the test ends.
package jobstest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/store"
)

// Start runs a jobs manager over an SQLite store of its own, the store's
// only user (Exclusive), and returns it once it has started. The test's
// cleanup stops it, waits for it and closes the store; a cleanup the
// test registers later runs before that.
func Start(t *testing.T) *jobs.Manager {
	t.Helper()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	m := jobs.New(jobs.Options{Store: st, Exclusive: true})
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-ran
		st.Close()
	})
	select {
	case <-m.Started():
	case <-time.After(10 * time.Second):
		t.Fatal("the jobs manager did not start within 10s")
	}
	return m
}
