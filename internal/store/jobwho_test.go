package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// whoJob is a job whose principal's name, groups and host are kept.
func whoJob(id string) *store.Job {
	return &store.Job{ID: id, Principal: "person:https://idp#alice", Name: "Alice", Groups: []string{"dev", "ops"}, Client: "claude-code",
		Server: "files", Tool: "export", Key: "k", Status: store.Running, Owner: "o"}
}

// checkWho reads job id back from s, with and without its list, and
// checks its principal's name, groups and host.
func checkWho(t *testing.T, s store.Store, id string) {
	t.Helper()
	j, err := s.Get(t.Context(), "", id)
	if err != nil || j.Name != "Alice" || !slices.Equal(j.Groups, []string{"dev", "ops"}) || j.Client != "claude-code" {
		t.Fatalf("Get: %+v, %v", j, err)
	}
	list, err := s.List(t.Context(), "person:https://idp#alice", 10)
	if err != nil || len(list) == 0 || list[0].Name != "Alice" {
		t.Fatalf("List: %+v, %v", list, err)
	}
}

// A store made before jobs kept their principal's name, groups and host
// (SQLite: a file without the columns; PostgreSQL: schema version 7)
// gains them when opened, keeps its jobs, and keeps them for new ones.
func TestJobWhoSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE jobs (id TEXT PRIMARY KEY, principal TEXT NOT NULL, server TEXT NOT NULL, tool TEXT NOT NULL,
		key TEXT NOT NULL, params BLOB, idempotent INTEGER NOT NULL, status TEXT NOT NULL, attempt INTEGER NOT NULL, owner TEXT NOT NULL,
		lease_until INTEGER NOT NULL, progress BLOB, result BLOB, error TEXT NOT NULL, note TEXT NOT NULL, created INTEGER NOT NULL,
		updated INTEGER NOT NULL, finished INTEGER NOT NULL, expired INTEGER NOT NULL DEFAULT 0, late_status TEXT NOT NULL DEFAULT '',
		late_result BLOB, late_error TEXT NOT NULL DEFAULT '', late_at INTEGER NOT NULL DEFAULT 0);
		INSERT INTO jobs VALUES ('old', 'local', 's', 't', 'k', NULL, 0, 'completed', 1, 'o', 0, NULL, NULL, '', '', 1, 1, 1, 0, '', NULL, '', 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if j, err := s.Get(t.Context(), "local", "old"); err != nil || j.Name != "" || j.Groups != nil || j.Client != "" {
		t.Fatalf("the job of the older file: %+v, %v", j, err)
	}
	if err := s.Create(t.Context(), whoJob("new"), time.Minute); err != nil {
		t.Fatal(err)
	}
	checkWho(t, s, "new")
}

func TestJobWhoPostgres(t *testing.T) {
	url := storetest.PostgresURL(t)
	openPG(t, url).Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	// Back to version 7, with a job of its own.
	if _, err := conn.Exec(ctx, `ALTER TABLE jobs DROP COLUMN who_name, DROP COLUMN who_groups, DROP COLUMN who_client;
		UPDATE mcpx_schema SET version = 7;
		INSERT INTO jobs (id, principal, server, tool, key, idempotent, status, attempt, owner, lease_until, error, note, created, updated)
		VALUES ('old', 'local', 's', 't', 'k', false, 'completed', 1, 'o', 0, '', '', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if store.SchemaVersion != 8 {
		t.Fatalf("schema version %d: this test brings a store from 7 to 8", store.SchemaVersion)
	}
	s := openPG(t, url)
	defer s.Close()
	if j, err := s.Get(ctx, "local", "old"); err != nil || j.Name != "" || j.Groups != nil {
		t.Fatalf("the job of the older schema: %+v, %v", j, err)
	}
	if err := s.Create(ctx, whoJob("new"), time.Minute); err != nil {
		t.Fatal(err)
	}
	checkWho(t, s, "new")
}
