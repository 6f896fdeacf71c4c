package store_test

import (
	"testing"
	"time"

	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// Each gateway's heartbeat is seen by the others, with the jobs it runs;
// a clean stop leaves, and a gateway not seen for long is forgotten.
func TestPostgresReplicas(t *testing.T) {
	url := storetest.PostgresURL(t)
	a, b := openPG(t, url), openPG(t, url)
	defer a.Close()
	defer b.Close()
	ctx := t.Context()
	now := time.Now()
	ra := store.Replica{Owner: "mcpx-a", Address: "10.0.0.1:7001", Host: "a", PID: 11, Version: "v1", Started: now.Add(-time.Hour)}
	rb := store.Replica{Owner: "mcpx-b", Address: "10.0.0.2:7001", Host: "b", PID: 22, Version: "v1", Started: now}
	const forget = time.Hour
	for _, r := range []struct {
		st *store.Postgres
		r  store.Replica
	}{{a, ra}, {b, rb}} {
		if err := r.st.Beat(ctx, r.r, forget); err != nil {
			t.Fatal(err)
		}
	}
	lease := now.Add(30 * time.Second)
	for _, id := range []string{"j1", "j2"} {
		if err := a.Create(ctx, &store.Job{ID: id, Principal: "p", Status: store.Running, Owner: "mcpx-a"}, time.Until(lease)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Create(ctx, &store.Job{ID: "j3", Principal: "p", Status: store.Running, Owner: "mcpx-a", LeaseUntil: now}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Finish(ctx, "j3", store.Lease{Owner: "mcpx-a", Attempt: 1}, store.Completed, nil, ""); err != nil {
		t.Fatal(err)
	}
	got, err := b.Replicas(ctx)
	if err != nil || len(got) != 2 {
		t.Fatalf("Replicas: %+v %v", got, err)
	}
	if g := got[0]; g.Owner != "mcpx-a" || g.Address != ra.Address || g.Host != "a" || g.PID != 11 || g.Jobs != 2 ||
		g.LeaseUntil.Sub(lease).Abs() > time.Second || g.Seen.Before(now.Add(-time.Second)) || g.Started.Sub(ra.Started).Abs() > time.Second ||
		g.Age < 0 || g.Age > 5*time.Second || (g.LeaseLeft-time.Until(lease)).Abs() > time.Second {
		t.Errorf("replica A as B sees it: %+v", g)
	}
	if g := got[1]; g.Owner != "mcpx-b" || g.Jobs != 0 || !g.LeaseUntil.IsZero() {
		t.Errorf("replica B: %+v", g)
	}
	if err := a.Leave(ctx, "mcpx-a"); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Replicas(ctx); len(got) != 1 || got[0].Owner != "mcpx-b" {
		t.Errorf("after A left: %+v", got)
	}
	// A heartbeat forgets those not seen for forgetAfter.
	if err := a.Beat(ctx, ra, -time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Replicas(ctx); len(got) != 0 {
		t.Errorf("forgetting every replica seen before a minute from now: %+v left", got)
	}
}
