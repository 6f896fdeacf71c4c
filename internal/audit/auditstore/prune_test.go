package auditstore

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"mcpx/internal/store"
)

// Prune bounds the store's table by age and by rows, at its start and
// then every interval.
func TestPrune(t *testing.T) {
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	var rows []store.AuditRow
	for _, age := range []time.Duration{48 * time.Hour, 3 * time.Hour, 2 * time.Hour, time.Hour, time.Minute} {
		rows = append(rows, store.AuditRow{Time: now.Add(-age), Kind: "call", Principal: "local", Outcome: "ok", Tool: age.String()})
	}
	if err := st.AppendAudit(t.Context(), rows); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Prune(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)), st, 24*time.Hour, 3, time.Hour)
	}()
	deadline := time.Now().Add(10 * time.Second)
	var got []store.AuditRow
	for {
		if got, err = st.QueryAudit(t.Context(), store.AuditQuery{}); err != nil {
			t.Fatal(err)
		}
		if len(got) <= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if len(got) != 3 || got[0].Tool != "1m0s" || got[2].Tool != "2h0m0s" {
		t.Errorf("after pruning to a day and 3 rows: %+v", got)
	}
}
