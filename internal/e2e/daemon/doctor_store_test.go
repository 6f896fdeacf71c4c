package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// TestDoctorStore: doctor looks at the job store without changing it.
// The embedded file: absent until a daemon makes it, then this user's
// alone (a file others may read fails). A shared PostgreSQL store: an
// empty database, one at this build's schema, one a newer mcpx migrated
// (fails, and doctor does not touch it), and a server that does not
// answer (fails, naming it without the password).
func TestDoctorStore(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		file := filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "jobs.db")
		r, _ := runDoctor(t, e, cfg)
		if level, detail, _ := r.find("store", file); level != "info" || !strings.Contains(detail, "no job store yet") {
			t.Errorf("before any daemon: %s %q, want info: no job store yet (checks %+v)", level, detail, r.Checks)
		}
		if out, stderr, code := e.Run(harness.RelayWait, "call", "--config", cfg, "demo.echo", `{"text": "hi"}`); code != 0 {
			t.Fatalf("mcpx call: exit %d\n%s%s", code, out, stderr)
		}
		r, _ = runDoctor(t, e, cfg)
		if level, detail, _ := r.find("store", file); level != "ok" || !strings.Contains(detail, "embedded SQLite store") {
			t.Errorf("the daemon's store: %s %q, want ok", level, detail)
		}
		if err := os.Chmod(file, 0o644); err != nil {
			t.Fatal(err)
		}
		r, code := runDoctor(t, e, cfg)
		if level, detail, _ := r.find("store", file); code != 1 || level != "fail" || !strings.Contains(detail, "others may read job results") {
			t.Errorf("a store others may read: exit %d, %s %q", code, level, detail)
		}
	})

	t.Run("postgres", func(t *testing.T) {
		e := mcpxtest.NewEnv(t)
		pg := storetest.PostgresURL(t)
		cfg := e.WriteConfig(map[string]any{"store": pg}, mcpxtest.Demo{Name: "demo"})
		storeCheck := func(wantCode int) (level, detail string) {
			t.Helper()
			r, code := runDoctor(t, e, cfg)
			for _, c := range r.Checks {
				if c.Kind == "store" {
					level, detail = c.Level, c.Detail
				}
			}
			if code != wantCode {
				t.Errorf("doctor exit %d, want %d (checks %+v)", code, wantCode, r.Checks)
			}
			return level, detail
		}
		if level, detail := storeCheck(0); level != "info" || !strings.Contains(detail, "no mcpx has used this database yet") {
			t.Errorf("an empty database: %s %q", level, detail)
		}
		var n int
		if err := storetest.QueryRow(t, pg, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`, &n); err != nil || n != 0 {
			t.Fatalf("doctor changed the empty database: %d tables (%v)", n, err)
		}

		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		st, err := store.OpenPostgres(ctx, pg)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		if level, detail := storeCheck(0); level != "ok" || !strings.Contains(detail, fmt.Sprintf("schema version %d", store.SchemaVersion)) {
			t.Errorf("a store at this build's schema: %s %q", level, detail)
		}

		newer := store.SchemaVersion + 1
		if err := storetest.QueryRow(t, pg, fmt.Sprintf(`UPDATE mcpx_schema SET version = %d RETURNING version`, newer), &n); err != nil {
			t.Fatal(err)
		}
		if level, detail := storeCheck(1); level != "fail" || !strings.Contains(detail, "newer than this mcpx's") {
			t.Errorf("a store a newer mcpx migrated: %s %q", level, detail)
		}
		if err := storetest.QueryRow(t, pg, `SELECT version FROM mcpx_schema`, &n); err != nil || n != newer {
			t.Errorf("doctor changed the schema version: %d (%v), want %d", n, err, newer)
		}

		down := fmt.Sprintf("postgres://mcpx:sekrit@127.0.0.1:%d/mcpx", harness.FreePort(t))
		cfg = e.WriteConfig(map[string]any{"store": down}, mcpxtest.Demo{Name: "demo"})
		level, detail := storeCheck(1)
		if level != "fail" || !strings.Contains(detail, "unavailable") || strings.Contains(detail, "sekrit") {
			t.Errorf("a server that does not answer: %s %q, want fail naming it without the password", level, detail)
		}
	})
}
