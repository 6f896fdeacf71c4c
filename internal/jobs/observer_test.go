package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// events records what an observer hears.
type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, s)
}

func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.got)
}

func (e *events) JobStarted(server, tool string) { e.add("started " + server + "." + tool) }
func (e *events) JobProgressed()                 { e.add("progressed") }
func (e *events) JobEnded(server, tool, s string) {
	e.add(fmt.Sprintf("ended %s.%s %s", server, tool, s))
}

// The observer hears of jobs only, each start before its end, with the
// status each ended with: completed, cancelled, and interrupted by a stop.
func TestObserverHearsJobs(t *testing.T) {
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ev := &events{}
	m := jobs.New(jobs.Options{Store: st, Exclusive: true, Observer: ev})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	wait(t, m.Started())

	// A call that never becomes a job: nothing.
	c, err := m.Start(context.Background(), spec("alice"), jobs.Later(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		c.SetProgress(jobs.Progress{Progress: 1})
		return json.RawMessage(`{}`), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	wait(t, c.Done())
	if got := ev.list(); len(got) != 0 {
		t.Fatalf("a call that was no job was heard: %v", got)
	}
	// Completed, with its progress.
	c, err = m.Start(t.Context(), spec("alice"), jobs.Now(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		c.SetProgress(jobs.Progress{Progress: 1})
		return json.RawMessage(`{}`), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	wait(t, c.Done())
	// Cancelled.
	block := func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	sp := spec("bob")
	sp.Key = "other"
	c, err = m.Start(t.Context(), sp, jobs.Now(block))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.CancelJob(t.Context(), "", c.ID(), principal.Principal{}, "a test"); err != nil {
		t.Fatal(err)
	}
	wait(t, c.Done())
	// Left running at a stop.
	sp.Key = "third"
	if _, err = m.Start(t.Context(), sp, jobs.Now(block)); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the manager did not stop")
	}
	want := []string{
		"started files.export", "progressed", "ended files.export completed",
		"started files.export", "ended files.export cancelled",
		"started files.export", "ended files.export interrupted",
	}
	if got := ev.list(); !slices.Equal(got, want) {
		t.Fatalf("heard %q\nwant  %q", got, want)
	}
}
