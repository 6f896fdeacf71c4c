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

// Two replicas over one store see each other in their Cluster, with the
// jobs each runs, from their heartbeats; one that stops leaves it.
func TestClusterHeartbeats(t *testing.T) {
	url := storetest.PostgresURL(t)
	start := func(addr string) (*jobs.Manager, func()) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		st, err := store.OpenPostgres(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		m := jobs.New(jobs.Options{Store: st, LeaseTerm: time.Second, Replica: &store.Replica{Address: addr, Host: "h", PID: 1, Version: "test"}})
		runCtx, stopRun := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = m.Run(runCtx) }()
		wait(t, m.Started())
		stop := func() { stopRun(); <-done; st.Close() }
		t.Cleanup(func() {
			select {
			case <-done:
			default:
				stop()
			}
		})
		return m, stop
	}
	a, _ := start("10.0.0.1:7001")
	b, stopB := start("10.0.0.2:7001")
	if c := b.Cluster(); c == nil || c.Self != b.Owner() || c.LeaseTerm != time.Second {
		t.Fatalf("B's cluster at start: %+v", c)
	}
	call, err := b.Start(context.Background(), spec("alice"), jobs.Later(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := call.Promote(context.Background()); !ok || err != nil {
		t.Fatal(ok, err)
	}
	seen := func(m *jobs.Manager, ok func([]store.Replica) bool) []store.Replica {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if c := m.Cluster(); c != nil && c.Err == nil && ok(c.Replicas) {
				return c.Replicas
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s's cluster: %+v", m.Owner(), m.Cluster())
			}
		}
	}
	got := seen(a, func(rs []store.Replica) bool { return len(rs) == 2 && rs[1].Jobs == 1 })
	if got[0].Owner != a.Owner() || got[0].Address != "10.0.0.1:7001" || got[1].Owner != b.Owner() || got[1].LeaseUntil.IsZero() ||
		time.Since(got[1].Seen) > 10*time.Second {
		t.Errorf("A's view of the cluster: %+v", got)
	}
	stopB()
	seen(a, func(rs []store.Replica) bool { return len(rs) == 1 && rs[0].Owner == a.Owner() })
}
