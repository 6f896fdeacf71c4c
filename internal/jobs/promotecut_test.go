package jobs_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// A replica cut off from the store while it promotes a call (its insert
// of the job's row goes unanswered) ends its idempotent job's call before
// its peer may run it again: the insert neither holds the manager up nor
// outlives the lease it would give. The promotion's caller gives it 15 s
// (a host's request has no deadline of its own; this one bounds the test).
func TestPromoteDuringPartition(t *testing.T) {
	pg := storetest.PostgresURL(t)
	tp := mcpxtest.StartToxiproxy(t)
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	proxied := *u
	proxied.Host = tp.Proxy("pg", u.Host)
	const lease, work = 1500 * time.Millisecond, 8 * time.Second
	ex := &executions{running: map[string]int{}, runs: map[string][]string{}, began: map[string][]time.Time{}}
	rerun := func(who string) jobs.Runner {
		return func(ctx context.Context, j *store.Job, c *jobs.Call) (json.RawMessage, error) {
			return ex.run(ctx, who, j.ID, work)
		}
	}
	a := replica(t, proxied.String(), lease, rerun("a"))
	b := replica(t, pg, lease, rerun("b"))

	s := spec("alice")
	s.Idempotent = true
	var id string
	ready := make(chan struct{})
	c, err := a.m.Start(t.Context(), s, jobs.Now(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-ready
		return ex.run(ctx, "a", id, work)
	}))
	if err != nil {
		t.Fatal(err)
	}
	id = c.ID()
	close(ready)
	ended := make(chan time.Time, 1)
	go func() { <-c.Done(); ended <- time.Now() }()
	// Before the cut, the call runs at A and a renewal sent since its row
	// was written has been answered.
	written := time.Now()
	for deadline := time.Now().Add(10 * time.Second); !ex.running1(id) || !a.m.Leases().Since.After(written); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("before the cut: the call running at A %v, leases %+v", ex.running1(id), a.m.Leases())
		}
	}

	cut := time.Now()
	tp.AddToxic("pg", "cut-down", "timeout", false, map[string]any{"timeout": 0})
	tp.AddToxic("pg", "cut-up", "timeout", true, map[string]any{"timeout": 0})
	other := spec("alice")
	other.Idempotent, other.Key = true, jobs.Key("files", "export", json.RawMessage(`{"other":1}`))
	p, err := a.m.Start(context.Background(), other, jobs.Later(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}))
	if err != nil {
		t.Fatal(err)
	}
	promoted := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_, _, err := p.Promote(ctx)
		promoted <- err
	}()
	time.Sleep(4 * lease) // the partition lasts longer than lease + grace + a search for orphans
	tp.RemoveToxic("pg", "cut-down")
	tp.RemoveToxic("pg", "cut-up")

	var j *store.Job
	for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if j, err = b.st.Get(t.Context(), "alice", id); err != nil {
			t.Fatal(err)
		}
		if j.Status.Final() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idempotent job did not end after the partition: %+v", j)
		}
	}
	select {
	case err := <-promoted:
		t.Logf("the promotion during the cut: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the promotion during the cut never returned")
	}
	p.Cancel(context.Canceled)
	wait(t, c.Done())
	_, cerr := c.Result()
	at := (<-ended).Sub(cut).Round(time.Millisecond)
	ex.mu.Lock()
	if b := ex.began[id]; len(b) == 2 {
		t.Logf("A's call ended %v after the cut (%v); B ran it again from %v", at, cerr, b[1].Sub(cut).Round(time.Millisecond))
	}
	ex.mu.Unlock()
	if len(ex.overlap) > 0 {
		t.Errorf("jobs run twice at once: %v (runs %v)", ex.overlap, ex.runs)
	}
	if r := ex.runs[id]; j.Status != store.Completed || string(j.Result) != `{"content":[{"type":"text","text":"done by b"}]}` || len(r) != 2 {
		t.Errorf("idempotent job: %s %s, runs %v", j.Status, j.Result, r)
	}
}
