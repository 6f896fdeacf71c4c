package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// A gateway that only looks (mcpx doctor) changes nothing: ProbePostgres
// and OpenPostgresAsIs leave an empty database empty, and OpenPostgresAsIs
// refuses a store no mcpx has used or a newer mcpx migrated, and opens an
// older one without migrating it.
func TestPostgresLookOnly(t *testing.T) {
	url := storetest.PostgresURL(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	tables := func() int {
		var n int
		if err := storetest.QueryRow(t, url, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	p, err := store.ProbePostgres(ctx, url)
	if err != nil || p.Schema != 0 || p.Replicas != 0 {
		t.Fatalf("probing an empty database: %+v, %v", p, err)
	}
	if _, err := store.OpenPostgresAsIs(ctx, url); err == nil || !strings.Contains(err.Error(), "no mcpx has used this store") {
		t.Fatalf("opening an empty database as it is: %v, want refused", err)
	}
	if n := tables(); n != 0 {
		t.Fatalf("looking made %d tables", n)
	}

	openPG(t, url).Close()
	p, err = store.ProbePostgres(ctx, url)
	if err != nil || p.Schema != store.SchemaVersion {
		t.Fatalf("probing a migrated store: %+v, %v, want schema %d", p, err, store.SchemaVersion)
	}
	s, err := store.OpenPostgresAsIs(ctx, url)
	if err != nil {
		t.Fatalf("opening a store at this build's schema as it is: %v", err)
	}
	s.Close()

	var v int
	if err := storetest.QueryRow(t, url, `UPDATE mcpx_schema SET version = version - 1 RETURNING version`, &v); err != nil {
		t.Fatal(err)
	}
	s, err = store.OpenPostgresAsIs(ctx, url)
	if err != nil {
		t.Fatalf("opening an older store as it is: %v", err)
	}
	s.Close()
	if err := storetest.QueryRow(t, url, `SELECT version FROM mcpx_schema`, &v); err != nil || v != store.SchemaVersion-1 {
		t.Fatalf("the schema version is %d (%v) after looking, want %d", v, err, store.SchemaVersion-1)
	}
	if err := storetest.QueryRow(t, url, fmt.Sprintf(`UPDATE mcpx_schema SET version = %d RETURNING version`, store.SchemaVersion+1), &v); err != nil {
		t.Fatal(err)
	}
	if _, err := store.OpenPostgresAsIs(ctx, url); err == nil || !strings.Contains(err.Error(), "newer than this mcpx's") {
		t.Fatalf("opening a newer store as it is: %v, want refused", err)
	}

	if _, err := store.ProbePostgres(ctx, "postgres://u:secret@127.0.0.1:1/db?connect_timeout=2"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("probing a server that does not answer: %v", err)
	}
}
