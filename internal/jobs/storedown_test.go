package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/store"
)

// downStore is a real store whose Finish fails while down is set: the
// seam where a shared store's server goes away.
type downStore struct {
	store.Store
	down atomic.Bool
}

func (s *downStore) Finish(ctx context.Context, id string, l store.Lease, to store.Status, res []byte, errText string) (bool, error) {
	if s.down.Load() {
		return false, &store.UnavailableError{Where: "test", Err: errors.New("connection refused")}
	}
	return s.Store.Finish(ctx, id, l, to, res, errText)
}

// A job that ends while the store is down keeps its result and writes it
// once the store is back: nothing is lost, and the job is not re-run.
func TestJobEndsWhileStoreDown(t *testing.T) {
	sq, err := store.OpenSQLite(filepath.Join(t.TempDir(), "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	st := &downStore{Store: sq}
	m := jobs.New(jobs.Options{Store: st, Exclusive: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wait(t, m.Started())
	release := make(chan struct{})
	c, err := m.Start(context.Background(), spec("alice"), jobs.Later(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`{"content":[{"type":"text","text":"kept"}]}`), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := c.Promote(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	st.down.Store(true)
	close(release)
	wait(t, c.Done())
	if j, _ := sq.Get(t.Context(), "alice", id); j.Status != store.Running {
		t.Fatalf("the end was written while the store was down: %+v", j)
	}
	st.down.Store(false)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		j, err := sq.Get(t.Context(), "alice", id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status == store.Completed && string(j.Result) == `{"content":[{"type":"text","text":"kept"}]}` && j.Attempt == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the end was not written after the store came back: %+v", j)
		}
	}
}
