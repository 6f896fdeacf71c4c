package harness

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"mcpx/internal/config"
	"mcpx/internal/mcpxtest"
)

// DaemonPID reads the pid of the daemon of e from its lock file.
func DaemonPID(t *testing.T, e *mcpxtest.Env) int {
	t.Helper()
	paths, err := config.DefaultPaths(func(k string) string { v, _ := e.Lookup(k); return v })
	if err != nil {
		t.Fatal(err)
	}
	locks, _ := filepath.Glob(filepath.Join(paths.RuntimeDir, "*.lock"))
	if len(locks) != 1 {
		t.Fatalf("want one daemon lock in %s, got %v", paths.RuntimeDir, locks)
	}
	b, err := os.ReadFile(locks[0])
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("lock file %s holds %q, not a pid", locks[0], b)
	}
	return pid
}
