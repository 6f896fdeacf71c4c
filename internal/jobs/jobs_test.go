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

	"go.uber.org/goleak"

	"mcpx/internal/jobs"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
	"mcpx/internal/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness runs a manager over a real SQLite file until the test ends.
type harness struct {
	path string
	st   store.Store
	m    *jobs.Manager
	stop func()
}

func start(t *testing.T, path string, rerun jobs.Runner) *harness {
	t.Helper()
	st, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	m := jobs.New(jobs.Options{Store: st, Exclusive: true, Rerun: rerun})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	select {
	case <-m.Started():
	case <-time.After(10 * time.Second):
		t.Fatal("manager did not start")
	}
	h := &harness{path: path, st: st, m: m}
	h.stop = func() {
		cancel()
		<-done
		st.Close()
	}
	return h
}

func wait(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out")
	}
}

func spec(principal string) jobs.Spec {
	return jobs.Spec{Principal: principal, Server: "files", Tool: "export", Params: json.RawMessage(`{"name":"export"}`), Key: jobs.Key("files", "export", nil)}
}

// A promoted call's result is kept for its principal, and the call ran
// under a context the caller's end did not touch.
func TestPromotedResultKept(t *testing.T) {
	h := start(t, filepath.Join(t.TempDir(), "jobs.db"), nil)
	defer h.stop()
	release := make(chan struct{})
	c, err := h.m.Start(context.Background(), spec("alice"), jobs.Later(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		c.SetProgress(jobs.Progress{Progress: 1, Message: "one"})
		<-release
		return json.RawMessage(`{"content":[{"type":"text","text":"done"}]}`), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	id, ok, err := c.Promote(t.Context())
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	if h.m.Attach("alice", spec("alice").Key) != c || h.m.Attach("bob", spec("alice").Key) != nil {
		t.Fatal("attach did not find the principal's own job alone")
	}
	j, err := h.m.Wait(t.Context(), "alice", id, 10*time.Millisecond)
	if err != nil || j.Status != store.Running {
		t.Fatalf("before the end: %+v %v", j, err)
	}
	close(release)
	j, err = h.m.Wait(t.Context(), "alice", id, 10*time.Second)
	if err != nil || j.Status != store.Completed || string(j.Result) != `{"content":[{"type":"text","text":"done"}]}` {
		t.Fatalf("after the end: %+v %v", j, err)
	}
	if _, err := h.m.Get(t.Context(), "bob", id); !errors.Is(err, store.ErrForeign) {
		t.Fatalf("bob read alice's job: %v", err)
	}
}

// A call that ends before the promotion is no job: nothing is written.
// In a synctest bubble, so that the counts are read while the manager's
// Run is idle (its start-up writes made, its timers not due): they hold
// only what the call wrote.
func TestUnpromotedWritesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, filepath.Join(t.TempDir(), "jobs.db"), nil)
		defer h.stop()
		synctest.Wait()
		before := h.m.Writes()
		c, _ := h.m.Start(context.Background(), spec("alice"), jobs.Later(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }))
		wait(t, c.Done())
		if _, ok, _ := c.Promote(t.Context()); ok {
			t.Fatal("an ended call became a job")
		}
		synctest.Wait()
		if n := h.m.Writes() - before; n != 0 {
			t.Fatalf("%d store writes for a call that never became a job", n)
		}
	})
}

// A cancel reaches the call with a JobCancelled cause, and the row says who.
func TestCancelJob(t *testing.T) {
	h := start(t, filepath.Join(t.TempDir(), "jobs.db"), nil)
	defer h.stop()
	var cause atomic.Value
	c, _ := h.m.Start(context.Background(), spec("alice"), jobs.Later(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-ctx.Done()
		cause.Store(context.Cause(ctx))
		return nil, context.Cause(ctx)
	}))
	id, _, _ := c.Promote(t.Context())
	j, err := h.m.CancelJob(t.Context(), "alice", id, principal.Principal{}, "mcpx jobs cancel")
	if err != nil || j.Status != store.Cancelled || j.Error != "job cancelled with mcpx jobs cancel" {
		t.Fatalf("after cancel: %+v %v", j, err)
	}
	if rc, ok := relay.CauseOf(cause.Load().(error)); !ok || rc.Kind != relay.JobCancelled {
		t.Fatalf("the call saw %v", cause.Load())
	}
}

// The host's cancel reaches a call that is not a job, and not one that is.
func TestCancelUnlessJob(t *testing.T) {
	h := start(t, filepath.Join(t.TempDir(), "jobs.db"), nil)
	defer h.stop()
	run := func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	a, _ := h.m.Start(context.Background(), spec("alice"), jobs.Later(run))
	if !a.CancelUnlessJob(&relay.Cause{Kind: relay.HostCancelled}) {
		t.Fatal("not cancelled")
	}
	wait(t, a.Done())
	b, _ := h.m.Start(context.Background(), spec("alice"), jobs.Later(run))
	b.Promote(t.Context())
	if b.CancelUnlessJob(&relay.Cause{Kind: relay.HostCancelled}) {
		t.Fatal("the host's cancel ended a job")
	}
	h.m.CancelJob(t.Context(), "", b.ID(), principal.Principal{}, "test")
	wait(t, b.Done())
}

// Progress is written at most once a flush interval, however much comes.
func TestProgressCoalesced(t *testing.T) {
	h := start(t, filepath.Join(t.TempDir(), "jobs.db"), nil)
	defer h.stop()
	release := make(chan struct{})
	c, _ := h.m.Start(context.Background(), spec("alice"), jobs.Later(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`{}`), nil
	}))
	id, _, _ := c.Promote(t.Context())
	before := h.m.Writes()
	began := time.Now()
	for i := range 5000 {
		c.SetProgress(jobs.Progress{Progress: float64(i)})
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		j, _ := h.m.Get(t.Context(), "alice", id)
		if string(j.Progress) == `{"progress":4999}` {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("progress never written: %s", j.Progress)
		}
		time.Sleep(20 * time.Millisecond)
	}
	elapsed := time.Since(began)
	close(release)
	wait(t, c.Done())
	writes := h.m.Writes() - before
	// flushes in the elapsed time, plus the last progress and the end.
	if max := int64(elapsed/jobs.FlushInterval) + 3; writes > max {
		t.Fatalf("%d writes for 5000 progress notes in %v (at most %d)", writes, elapsed, max)
	}
}

// ClearProgress leaves a job as if no progress had been noted: in the
// call, and in the store at the next flush.
func TestClearProgress(t *testing.T) {
	h := start(t, filepath.Join(t.TempDir(), "jobs.db"), nil)
	defer h.stop()
	release := make(chan struct{})
	c, _ := h.m.Start(context.Background(), spec("alice"), jobs.Later(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`{}`), nil
	}))
	defer func() { close(release); wait(t, c.Done()) }()
	id, _, _ := c.Promote(t.Context())
	stored := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			j, _ := h.m.Get(t.Context(), "alice", id)
			if string(j.Progress) == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("stored progress %q, want %q", j.Progress, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	c.SetProgress(jobs.Progress{Message: "waiting"})
	stored(`{"progress":0,"message":"waiting"}`)
	c.ClearProgress()
	if p, moved := c.LastProgress(); moved || p != (jobs.Progress{}) {
		t.Fatalf("LastProgress after ClearProgress: %+v %v", p, moved)
	}
	stored("")
}

// A daemon that stopped mid-call leaves the job running; the next start
// closes it as interrupted, or runs an idempotent one again once.
func TestRestartInterruptedAndRerun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	h := start(t, path, nil)
	run := func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	plain, _ := h.m.Start(context.Background(), spec("alice"), jobs.Later(run))
	plainID, _, _ := plain.Promote(t.Context())
	is := spec("alice")
	is.Idempotent, is.Key = true, "idem"
	idem, _ := h.m.Start(context.Background(), is, jobs.Later(run))
	idemID, _, _ := idem.Promote(t.Context())
	h.stop()

	var reruns atomic.Int32
	h = start(t, path, func(ctx context.Context, j *store.Job, c *jobs.Call) (json.RawMessage, error) {
		reruns.Add(1)
		return json.RawMessage(`{"again":true}`), nil
	})
	defer h.stop()
	j, err := h.m.Get(t.Context(), "alice", plainID)
	if err != nil || j.Status != store.Interrupted || j.Error == "" {
		t.Fatalf("plain job after restart: %+v %v", j, err)
	}
	j, err = h.m.Wait(t.Context(), "alice", idemID, 10*time.Second)
	if err != nil || j.Status != store.Completed || string(j.Result) != `{"again":true}` || j.Attempt != 2 || j.Note == "" {
		t.Fatalf("idempotent job after restart: %+v %v", j, err)
	}
	if reruns.Load() != 1 {
		t.Fatalf("%d re-runs", reruns.Load())
	}
}

// A result over the size limit is not kept, and the error names the limit.
func TestResultLimit(t *testing.T) {
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := jobs.New(jobs.Options{Store: st, MaxResultBytes: 10})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wait(t, m.Started())
	release := make(chan struct{})
	c, _ := m.Start(context.Background(), spec("alice"), jobs.Later(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`{"content":"far too long"}`), nil
	}))
	id, _, _ := c.Promote(t.Context())
	close(release)
	j, err := m.Wait(t.Context(), "alice", id, 10*time.Second)
	if err != nil || j.Status != store.Failed || j.Result != nil || !strings.Contains(j.Error, "mcpx.jobs.maxResultBytes") {
		t.Fatalf("%+v %v", j, err)
	}
}
