package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// BenchmarkSQLiteJob is one job's writes and one read: its row, its end,
// and the read of its result.
func BenchmarkSQLiteJob(b *testing.B) {
	s, err := store.OpenSQLite(filepath.Join(b.TempDir(), store.FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	benchJob(b, s)
}

// BenchmarkPostgresJob is BenchmarkSQLiteJob against the test server
// (MCPX_TEST_POSTGRES): a round trip to PostgreSQL per statement.
func BenchmarkPostgresJob(b *testing.B) {
	s, err := store.OpenPostgres(context.Background(), storetest.PostgresURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	benchJob(b, s)
}

func benchJob(b *testing.B, s store.Store) {
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		id := fmt.Sprint("job_", i)
		if err := s.Create(ctx, &store.Job{ID: id, Principal: "p", Server: "s", Tool: "t", Key: "k", Status: store.Running, Owner: "o", LeaseUntil: time.Now().Add(time.Minute)}, time.Minute); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Finish(ctx, id, store.Lease{Owner: "o", Attempt: 1}, store.Completed, []byte(`{"content":[]}`), ""); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Get(ctx, "p", id); err != nil {
			b.Fatal(err)
		}
	}
}
