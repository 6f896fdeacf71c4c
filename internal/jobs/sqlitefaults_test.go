package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/store"
)

// sqliteManager runs a manager over the SQLite file path with a short
// lease until the test ends.
func sqliteManager(t *testing.T, path string, exclusive bool) *harness {
	t.Helper()
	st, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	m := jobs.New(jobs.Options{Store: st, Exclusive: exclusive, LeaseTerm: 600 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	wait(t, m.Started())
	h := &harness{path: path, st: st, m: m}
	stopped := false
	h.stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
			st.Close()
		}
	}
	t.Cleanup(h.stop)
	return h
}

// gated starts a job on h that ends with result once gate closes.
func gated(t *testing.T, h *harness, key string, gate <-chan struct{}, result json.RawMessage) *jobs.Call {
	t.Helper()
	s := spec("alice")
	s.Key = key
	c, err := h.m.Start(t.Context(), s, jobs.Now(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		select {
		case <-gate:
			return result, nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// until polls cond every 10 ms for at most 10 s.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
	}
}

// The store's file is removed under a running manager: a new job is
// refused, saying why; a job that ends is not written to the unlinked
// file (which the next start would not see), and the renewals say why.
func TestSQLiteFileRemoved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	h := sqliteManager(t, path, true)
	gate := make(chan struct{})
	c := gated(t, h, "k1", gate, json.RawMessage(`{"content":[]}`))
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	var gone *store.FileGoneError
	s := spec("alice")
	s.Key = "k2"
	if _, err := h.m.Start(t.Context(), s, jobs.Now(func(context.Context, *jobs.Call) (json.RawMessage, error) { return nil, nil })); !errors.As(err, &gone) {
		t.Fatalf("a job started in a removed store: %v", err)
	}
	close(gate)
	wait(t, c.Done())
	until(t, "the renewals did not say the store is gone", func() bool { return errors.As(h.m.Leases().Err, &gone) })
	if msg := h.m.Leases().Err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "removed") {
		t.Errorf("the error does not say what happened: %s", msg)
	}
}

// mountTmpfs mounts a tmpfs of size at a fresh directory until the test
// ends, or skips the test where this process may not mount one.
func mountTmpfs(t *testing.T, size string) string {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): this test needs CAP_SYS_ADMIN, as root has", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
	return dir
}

// fill writes a file in dir until its filesystem is full.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return p
		}
	}
}

// The store's filesystem is full: a new job is refused with SQLite's
// error; a job that ends keeps its result in memory and writes it once
// there is room again. Nothing is lost, nothing crashes.
func TestSQLiteDiskFull(t *testing.T) {
	dir := mountTmpfs(t, "1m")
	path := filepath.Join(dir, "jobs.db")
	h := sqliteManager(t, path, true)
	gate := make(chan struct{})
	big := json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 200<<10) + `"}]}`)
	c := gated(t, h, "k1", gate, big)
	filler := fill(t, dir)
	s := spec("alice")
	s.Key = "k2"
	if _, err := h.m.Start(t.Context(), s, jobs.Now(func(context.Context, *jobs.Call) (json.RawMessage, error) { return nil, nil })); err == nil || !strings.Contains(err.Error(), "full") {
		t.Logf("a job started on a full disk: %v (SQLite found room in its pages)", err)
	}
	close(gate)
	wait(t, c.Done())
	if j, err := h.st.Get(t.Context(), "alice", c.ID()); err != nil || j.Status != store.Running {
		t.Fatalf("on a full disk the end was written, or the job cannot be read: %+v %v", j, err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	until(t, "the end was not written once there was room", func() bool {
		j, err := h.st.Get(t.Context(), "alice", c.ID())
		return err == nil && j.Status == store.Completed && string(j.Result) == string(big)
	})
}

// Two managers (two daemons) on one SQLite file, the second without the
// file's lock (so sharing it as replicas do): neither takes the other's
// running job; once the first stops, the second closes its job.
func TestSQLiteTwoManagers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	a := sqliteManager(t, path, true)
	b := sqliteManager(t, path, false)
	gate := make(chan struct{})
	ca := gated(t, a, "ka", gate, json.RawMessage(`{"content":[]}`))
	cb := gated(t, b, "kb", gate, json.RawMessage(`{"content":[]}`))
	time.Sleep(5 * 600 * time.Millisecond)
	for _, c := range []*jobs.Call{ca, cb} {
		if j, err := a.st.Get(t.Context(), "alice", c.ID()); err != nil || j.Status != store.Running || j.Attempt != 1 {
			t.Fatalf("after five lease terms: %+v %v", j, err)
		}
	}
	a.stop()
	until(t, "B did not close A's job", func() bool {
		j, err := b.st.Get(t.Context(), "alice", ca.ID())
		return err == nil && j.Status == store.Interrupted
	})
	close(gate)
	wait(t, cb.Done())
	if j, _ := b.st.Get(t.Context(), "alice", cb.ID()); j.Status != store.Completed {
		t.Fatalf("B's job: %+v", j)
	}
}
