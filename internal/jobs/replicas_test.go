package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// replica runs a manager over its own connection to a shared PostgreSQL
// schema, until stop.
func replica(t *testing.T, url string, lease time.Duration, rerun jobs.Runner) *harness {
	t.Helper()
	return replicaOpts(t, url, jobs.Options{Rerun: rerun, LeaseTerm: lease})
}

// replicaOpts is replica with opts (its Store set), each of prepare
// applied to the manager before it runs.
func replicaOpts(t *testing.T, url string, opts jobs.Options, prepare ...func(*jobs.Manager)) *harness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := store.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	opts.Store = st
	m := jobs.New(opts)
	for _, p := range prepare {
		p(m)
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(runCtx) }()
	wait(t, m.Started())
	h := &harness{st: st, m: m}
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			stopRun()
			<-done
			st.Close()
		})
	}
	t.Cleanup(h.stop)
	return h
}

// A job running on replica A, cancelled on replica B: A's call ends at
// once with the cause B wrote, through the store's NOTIFY. The first
// cancels may come before A's LISTEN is in place (nothing then ends the
// call but its own timeout): the test cancels until one is heard, then
// times 50 more, each of which must be heard.
func TestCancelAcrossReplicas(t *testing.T) {
	url := storetest.PostgresURL(t)
	a := replica(t, url, 0, nil)
	b := replica(t, url, 0, nil)
	deadline := time.Now().Add(10 * time.Second)
	for !cancelOnB(t, a, b, 200*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no cancel on B reached A")
		}
	}
	var took []time.Duration
	for range 50 {
		t0 := time.Now()
		if !cancelOnB(t, a, b, 10*time.Second) {
			t.Fatal("A's call did not hear B's cancel")
		}
		took = append(took, time.Since(t0))
	}
	slices.Sort(took)
	t.Logf("cancel on B to A's call ending: p50 %v, p99 %v (%d cancels)", took[len(took)/2], took[len(took)*99/100], len(took))
}

// cancelOnB starts a job on a, cancels it on b, and reports whether a's
// call ended with b's cause within wait (it is ended anyway after).
func cancelOnB(t *testing.T, a, b *harness, wait time.Duration) bool {
	t.Helper()
	cause := make(chan error, 1)
	giveUp := make(chan struct{})
	c, err := a.m.Start(context.Background(), spec("alice"), jobs.Later(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		select {
		case <-ctx.Done():
			cause <- context.Cause(ctx)
			return nil, context.Cause(ctx)
		case <-giveUp:
			return nil, errors.New("not cancelled")
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	id, ok, err := c.Promote(t.Context())
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	j, err := b.m.CancelJob(t.Context(), "alice", id, principal.Principal{}, "mcpx_job_cancel")
	if err != nil || j.Status != store.Cancelled {
		t.Fatalf("cancel on B: %+v %v", j, err)
	}
	heard := false
	select {
	case err := <-cause:
		rc, ok := relay.CauseOf(err)
		if !ok || rc.Kind != relay.JobCancelled || rc.Detail != "mcpx_job_cancel" {
			t.Fatalf("A's call ended with %v", err)
		}
		heard = true
	case <-time.After(wait):
		close(giveUp)
	}
	<-c.Done()
	if got, _ := a.m.Get(t.Context(), "alice", id); got.Status != store.Cancelled || got.Error != "job cancelled with mcpx_job_cancel" {
		t.Fatalf("after the cancel: %+v", got)
	}
	return heard
}

// A replica that dies leaves running jobs; two live replicas find them
// at once, race to take them, and each is taken by one: a non-idempotent
// one reads interrupted, an idempotent one runs again once and finishes.
func TestOrphansOfADeadReplica(t *testing.T) {
	url := storetest.PostgresURL(t)
	const lease = 300 * time.Millisecond
	ctx := t.Context()
	seed, err := store.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer seed.Close()
	const n = 12
	for i := range n {
		j := &store.Job{ID: fmt.Sprint("job", i), Principal: "alice", Server: "files", Tool: "export", Key: fmt.Sprint("k", i),
			Params: json.RawMessage(`{"name":"export"}`), Idempotent: i%2 == 0, Status: store.Running,
			Owner: "mcpx-dead"}
		if err := seed.Create(ctx, j, lease); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	runs := map[string][]string{}
	rerun := func(who string) jobs.Runner {
		return func(ctx context.Context, j *store.Job, c *jobs.Call) (json.RawMessage, error) {
			mu.Lock()
			runs[j.ID] = append(runs[j.ID], who)
			mu.Unlock()
			return json.RawMessage(`{"content":[]}`), nil
		}
	}
	replica(t, url, lease, rerun("a"))
	replica(t, url, lease, rerun("b"))
	deadline := time.Now().Add(20 * time.Second)
	for {
		all, err := seed.List(ctx, "alice", 0)
		if err != nil {
			t.Fatal(err)
		}
		final := 0
		for _, j := range all {
			if j.Status.Final() {
				final++
			}
		}
		if final == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d orphans ended", final, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i := range n {
		id := fmt.Sprint("job", i)
		j, err := seed.Get(ctx, "alice", id)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		r := runs[id]
		mu.Unlock()
		if i%2 == 0 {
			if j.Status != store.Completed || j.Attempt != 2 || len(r) != 1 {
				t.Errorf("idempotent %s: %s attempt %d, run by %v", id, j.Status, j.Attempt, r)
			}
		} else if j.Status != store.Interrupted || len(r) != 0 {
			t.Errorf("%s: %s, run by %v", id, j.Status, r)
		}
	}
}
