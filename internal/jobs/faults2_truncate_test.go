package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpx/internal/jobs"
	"mcpx/internal/store"
)

// The store's file is truncated under a running manager (the same file,
// cut to nothing: SQLite goes on serving from its cache and WAL and would
// write on with no word): a new job is refused, saying the file was
// truncated; a job that ends is not written into the cut file, its end
// kept in memory; the renewals say why (for mcpx status and the metric).
func TestSQLiteFileTruncated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	h := sqliteManager(t, path, true)
	gate := make(chan struct{})
	c := gated(t, h, "k1", gate, json.RawMessage(`{"content":[{"type":"text","text":"kept"}]}`))
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	var gone *store.FileGoneError
	s := spec("alice")
	s.Key = "k2"
	if _, err := h.m.Start(t.Context(), s, jobs.Now(func(context.Context, *jobs.Call) (json.RawMessage, error) { return nil, nil })); !errors.As(err, &gone) || !strings.Contains(err.Error(), "truncated to 0 bytes") {
		t.Fatalf("a job started in a truncated store: %v", err)
	}
	close(gate)
	wait(t, c.Done())
	until(t, "the renewals did not say the store was truncated", func() bool { return errors.As(h.m.Leases().Err, &gone) })
	if msg := h.m.Leases().Err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "truncated") {
		t.Errorf("the error does not say what happened: %s", msg)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Errorf("the truncated file was written to: %v %v", fi.Size(), err)
	}
}

// A store file overwritten in place (its header gone, its size kept) is
// refused alike.
func TestSQLiteFileOverwritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	h := sqliteManager(t, path, true)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("not a database!!"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var gone *store.FileGoneError
	s := spec("alice")
	if _, err := h.m.Start(t.Context(), s, jobs.Now(func(context.Context, *jobs.Call) (json.RawMessage, error) { return nil, nil })); !errors.As(err, &gone) || !strings.Contains(err.Error(), "header") {
		t.Fatalf("a job started in an overwritten store: %v", err)
	}
}
