package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

func TestAuditSQLite(t *testing.T) {
	s, err := store.OpenSQLite(filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	testAudit(t, s)
}

func TestAuditPostgres(t *testing.T) {
	s := openPG(t, storetest.PostgresURL(t))
	defer s.Close()
	testAudit(t, s)
}

// testAudit writes rows, reads them back by each filter, and prunes
// by age and by count.
func testAudit(t *testing.T, s store.Audit) {
	ctx := t.Context()
	t0 := time.UnixMilli(1_700_000_000_000)
	row := func(i int, who, tool, outcome string) store.AuditRow {
		return store.AuditRow{Time: t0.Add(time.Duration(i) * time.Minute), Kind: "call", Principal: who, Name: who + "-name",
			Groups: []string{"eng", "ops"}, Host: "claude-code", Face: "http", Server: "demo", Tool: tool, Outcome: outcome,
			DurationMS: int64(i), Job: "", Replica: "r1", ArgsSHA256: "abc"}
	}
	rows := []store.AuditRow{row(0, "alice", "echo", "ok"), row(1, "bob", "echo", "error"), row(2, "alice", "slow", "ok"), row(3, "bob", "slow", "ok")}
	if err := s.AppendAudit(ctx, rows); err != nil {
		t.Fatal(err)
	}
	got, err := s.QueryAudit(ctx, store.AuditQuery{})
	if err != nil || len(got) != 4 {
		t.Fatalf("all: %d rows, %v", len(got), err)
	}
	if g := got[0]; g.Principal != "bob" || g.Tool != "slow" || !g.Time.Equal(rows[3].Time) || len(g.Groups) != 2 || g.Groups[1] != "ops" ||
		g.Name != "bob-name" || g.Host != "claude-code" || g.Face != "http" || g.DurationMS != 3 || g.Replica != "r1" || g.ArgsSHA256 != "abc" {
		t.Errorf("newest row read back as %+v", g)
	}
	for _, tc := range []struct {
		q    store.AuditQuery
		want int
	}{
		{store.AuditQuery{Principal: "alice"}, 2},
		{store.AuditQuery{Principal: "bob-name"}, 2},
		{store.AuditQuery{Tool: "slow"}, 2},
		{store.AuditQuery{Outcome: "error"}, 1},
		{store.AuditQuery{Server: "other"}, 0},
		{store.AuditQuery{Since: t0.Add(time.Minute), Until: t0.Add(3 * time.Minute)}, 2},
		{store.AuditQuery{Principal: "alice", Tool: "echo"}, 1},
		{store.AuditQuery{Limit: 3}, 3},
	} {
		got, err := s.QueryAudit(ctx, tc.q)
		if err != nil || len(got) != tc.want {
			t.Errorf("%+v: %d rows, %v; want %d", tc.q, len(got), err, tc.want)
		}
	}
	n, err := s.PruneAudit(ctx, t0.Add(time.Minute), 0)
	if err != nil || n != 1 {
		t.Fatalf("prune by age: %d, %v", n, err)
	}
	n, err = s.PruneAudit(ctx, time.Time{}, 2)
	if err != nil || n != 1 {
		t.Fatalf("prune by count: %d, %v", n, err)
	}
	got, _ = s.QueryAudit(ctx, store.AuditQuery{})
	if len(got) != 2 || got[1].Tool != "slow" || got[1].Principal != "alice" {
		t.Errorf("after pruning: %+v", got)
	}
}
