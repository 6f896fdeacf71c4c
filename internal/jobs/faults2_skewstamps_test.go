package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// Every time a shared store keeps is its own clock's, and every age it
// compares is given as a duration: a replica whose clock is two hours
// off (ahead, or behind) neither takes a peer's job, nor expires a
// result kept for an hour, nor stamps its jobs and heartbeats with its
// own time, nor sees a live peer as lapsed (or a dead one as live).
func TestSkewedClockStamps(t *testing.T) {
	for _, skew := range []time.Duration{2 * time.Hour, -2 * time.Hour} {
		t.Run(skew.String(), func(t *testing.T) { skewedStamps(t, skew) })
	}
}

func skewedStamps(t *testing.T, skew time.Duration) {
	pg := storetest.PostgresURL(t)
	const lease = 1500 * time.Millisecond
	never := func(ctx context.Context, j *store.Job, c *jobs.Call) (json.RawMessage, error) {
		t.Errorf("job %s run again by a replica", j.ID)
		return nil, nil
	}
	opts := func(clock func() time.Time, addr string) jobs.Options {
		return jobs.Options{Rerun: never, LeaseTerm: lease, Retention: time.Hour, Clock: clock,
			Replica: &store.Replica{Address: addr, Host: "h", PID: 1, Version: "test"}}
	}
	b := replicaOpts(t, pg, opts(nil, "b:1"))
	release := make(chan struct{})
	run := func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		select {
		case <-release:
			return json.RawMessage(`{"content":[]}`), nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	start := func(h *harness, n int, run func(context.Context, *jobs.Call) (json.RawMessage, error)) string {
		t.Helper()
		s := spec("alice")
		s.Idempotent, s.Key = true, jobs.Key("files", "export", json.RawMessage(fmt.Sprint(`{"n":`, n, `}`)))
		c, err := h.m.Start(t.Context(), s, jobs.Now(run))
		if err != nil {
			t.Fatal(err)
		}
		return c.ID()
	}
	ended := func(id string) *store.Job {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			j, err := b.st.Get(t.Context(), "alice", id)
			if err != nil {
				t.Fatalf("job %s: %v", id, err)
			}
			if j.Status.Final() {
				return j
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s still %s", id, j.Status)
			}
		}
	}
	done := start(b, 0, func(context.Context, *jobs.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[]}`), nil
	})
	ended(done)
	long := start(b, 1, run)

	// A starts (expiring old results as it does) with its clock off.
	a := replicaOpts(t, pg, opts(func() time.Time { return time.Now().Add(skew) }, "a:1"))
	mine := start(a, 2, run)
	time.Sleep(3 * lease)
	for _, h := range []*harness{a, b} {
		c := h.m.Cluster()
		if c == nil || len(c.Replicas) != 2 {
			t.Fatalf("%s's cluster: %+v", h.m.Owner(), c)
		}
		for _, r := range c.Replicas {
			seen, until := c.Seen(r)
			if !c.Live(r) || c.Read.Sub(seen) > lease || until.Before(c.Read) {
				t.Errorf("%s sees %s lapsed (heartbeat %v before its read, lease until %v after): both run", h.m.Owner(), r.Owner, c.Read.Sub(seen), until.Sub(c.Read))
			}
		}
	}
	close(release)
	clock := b.st.(store.Clock)
	for _, id := range []string{long, mine} {
		j := ended(id)
		now, err := clock.Now(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != store.Completed || j.Attempt != 1 {
			t.Errorf("job %s: %s attempt %d, want completed at its first attempt (its lease held)", id, j.Status, j.Attempt)
		}
		if d := now.Sub(j.Created); d < 0 || d > 4*lease+5*time.Second {
			t.Errorf("job %s started %v before the store's now, want the few seconds it ran: stamped by a skewed clock", id, d)
		}
		if d := now.Sub(j.Finished); d < 0 || d > 5*time.Second {
			t.Errorf("job %s ended %v before the store's now", id, d)
		}
	}
	if j, err := b.st.Get(t.Context(), "alice", done); err != nil || j.Status != store.Completed {
		t.Errorf("B's job ended seconds ago, kept for an hour, after A started: %v %v", j, err)
	}
}

// A manager whose store is its own says so with its lease state, for
// mcpx status to word a lost lease as what it is there.
func TestLeasesExclusive(t *testing.T) {
	h := start(t, t.TempDir()+"/jobs.db", nil)
	defer h.stop()
	if !h.m.Leases().Exclusive {
		t.Error("an exclusive manager's lease state does not say so")
	}
	b := replica(t, storetest.PostgresURL(t), time.Second, nil)
	if b.m.Leases().Exclusive {
		t.Error("a replica's lease state says exclusive")
	}
}
