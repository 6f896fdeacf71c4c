package harness

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/mcpxtest"
	"mcpx/internal/store"
)

// KeptJob reads the job a log line names (job=ID) from the job store of
// mcpx serving HTTP in mode, once it has ended.
func KeptJob(t *testing.T, e *mcpxtest.Env, mode mcpxtest.Mode, line string) *store.Job {
	t.Helper()
	_, rest, ok := strings.Cut(line, "job=")
	if !ok {
		t.Fatalf("no job in %q", line)
	}
	id, _, _ := strings.Cut(rest, " ")
	id = strings.Trim(strings.TrimSpace(id), `"`)
	path := mcpxtest.InProcessFiles(e).Jobs
	if mode == mcpxtest.Daemon {
		path = filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", store.FileName)
	}
	st, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for deadline := time.Now().Add(WaitLong); ; time.Sleep(20 * time.Millisecond) {
		j, err := st.Get(context.Background(), "", id)
		if err != nil {
			t.Fatalf("job %s: %v", id, err)
		}
		if j.Status != store.Running || time.Now().After(deadline) {
			return j
		}
	}
}
