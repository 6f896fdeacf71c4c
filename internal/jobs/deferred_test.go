package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/store"
)

// onNeed runs a manager whose store opens on first need (Options.Open)
// until the test ends; open is what it opens with, counted in opens.
func onNeed(t *testing.T, open func() (store.Store, bool, error)) (m *jobs.Manager, opens *atomic.Int32) {
	t.Helper()
	opens = new(atomic.Int32)
	m = jobs.New(jobs.Options{Open: func() (store.Store, bool, error) { opens.Add(1); return open() }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return m, opens
}

// A manager whose store opens on first need leaves it closed for as long
// as nothing needs it, however long it runs; the first read opens it,
// and finds the orphans a stopped gateway left already dealt with, as a
// manager that opened its store at start would have.
func TestStoreOpensOnFirstNeed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	h := start(t, path, nil)
	orphan, _ := h.m.Start(context.Background(), spec("alice"), jobs.Later(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}))
	orphanID, _, err := orphan.Promote(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	h.stop() // leaves the job running, for the next start to close

	synctest.Test(t, func(t *testing.T) {
		var st *store.SQLite
		m, opens := onNeed(t, func() (store.Store, bool, error) {
			var err error
			st, err = store.OpenSQLite(path)
			return st, true, err
		})
		t.Cleanup(func() {
			if st != nil {
				st.Close()
			}
		})
		time.Sleep(2 * time.Hour) // past every renewal, flush and expiry
		synctest.Wait()
		if n := opens.Load(); n != 0 || m.Opened() {
			t.Fatalf("a manager nothing needed opened its store %d times in 2 hours", n)
		}
		select {
		case <-m.Started():
			t.Fatal("Started before anything needed the store")
		default:
		}
		j, err := m.Get(t.Context(), "alice", orphanID)
		if err != nil || j.Status != store.Interrupted {
			t.Fatalf("the first read, of a job a stopped gateway left running: %+v %v; want it interrupted", j, err)
		}
		c, err := m.Start(t.Context(), spec("bob"), jobs.Now(func(context.Context, *jobs.Call) (json.RawMessage, error) {
			return json.RawMessage(`{"ok":true}`), nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		wait(t, c.Done())
		if j, err := m.Wait(t.Context(), "bob", c.ID(), time.Second); err != nil || j.Status != store.Completed {
			t.Fatalf("a job after the store opened: %+v %v", j, err)
		}
		if n := opens.Load(); n != 1 || !m.Opened() || !m.Leases().Exclusive {
			t.Fatalf("opens %d, opened %v, exclusive %v; want 1, true, true (as Open said)", n, m.Opened(), m.Leases().Exclusive)
		}
	})
}

// A store that cannot be opened fails every use that needs it with why,
// and is not tried again; a call that never becomes a job runs as ever.
func TestStoreThatCannotOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := errors.New("no jobs: opening the job store failed: disk on fire")
		m, opens := onNeed(t, func() (store.Store, bool, error) { return nil, false, refused })
		synctest.Wait() // Run has started
		plain, err := m.Start(context.Background(), spec("alice"), jobs.Later(func(context.Context, *jobs.Call) (json.RawMessage, error) {
			return json.RawMessage(`{}`), nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		wait(t, plain.Done())
		if n := opens.Load(); n != 0 {
			t.Fatalf("a call that is no job opened the store %d times", n)
		}
		_, err = m.Start(t.Context(), spec("alice"), jobs.Now(func(context.Context, *jobs.Call) (json.RawMessage, error) {
			t.Error("a job whose row was never written ran")
			return nil, nil
		}))
		if !errors.Is(err, refused) {
			t.Fatalf("a job over a store that cannot open: %v, want %v", err, refused)
		}
		if _, err := m.Get(t.Context(), "alice", "job_x"); err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("a read: %v, want why the store cannot open", err)
		}
		if n := opens.Load(); n != 1 {
			t.Fatalf("the store was opened %d times, want once", n)
		}
	})
}
