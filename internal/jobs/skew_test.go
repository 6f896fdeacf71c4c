package jobs_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// Two replicas share a store; A's clock is an hour ahead of the store's
// (or behind it), B's is right. Each runs a job for several lease terms:
// neither takes the other's (leases keep to the store's clock, not to a
// replica's), and A says how far its clock is off.
func TestSkewedClock(t *testing.T) {
	for _, skew := range []time.Duration{time.Hour, -time.Hour} {
		t.Run(skew.String(), func(t *testing.T) {
			pg := storetest.PostgresURL(t)
			const lease = 1500 * time.Millisecond
			never := func(ctx context.Context, j *store.Job, c *jobs.Call) (json.RawMessage, error) {
				t.Errorf("job %s (%s) run again by a replica", j.ID, j.Tool)
				return nil, nil
			}
			a := replicaOpts(t, pg, jobs.Options{Rerun: never, LeaseTerm: lease, Clock: func() time.Time { return time.Now().Add(skew) }})
			b := replica(t, pg, lease, never)
			release := make(chan struct{})
			run := func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
				select {
				case <-release:
					return json.RawMessage(`{"content":[]}`), nil
				case <-ctx.Done():
					return nil, context.Cause(ctx)
				}
			}
			var ids []string
			for i, h := range []*harness{a, b} {
				s := spec("alice")
				s.Idempotent, s.Key = true, jobs.Key("files", "export", json.RawMessage(`{"replica":`+string(rune('0'+i))+`}`))
				c, err := h.m.Start(t.Context(), s, jobs.Now(run))
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, c.ID())
			}
			time.Sleep(3 * lease)
			close(release)
			for i, id := range ids {
				var j *store.Job
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
					var err error
					if j, err = b.st.Get(t.Context(), "alice", id); err != nil {
						t.Fatal(err)
					}
					if j.Status.Final() || time.Now().After(deadline) {
						break
					}
				}
				if j.Status != store.Completed || j.Attempt != 1 || j.Owner != []*harness{a, b}[i].m.Owner() {
					t.Errorf("replica %c's job: %s attempt %d owner %s", 'A'+i, j.Status, j.Attempt, j.Owner)
				}
			}
			if got := a.m.Leases().Skew; (got - skew).Abs() > time.Second {
				t.Errorf("A measured its clock %v ahead of the store's, want %v", got, skew)
			}
			if got := b.m.Leases().Skew; got.Abs() > time.Second {
				t.Errorf("B measured its clock %v ahead of the store's, want about 0", got)
			}
		})
	}
}
