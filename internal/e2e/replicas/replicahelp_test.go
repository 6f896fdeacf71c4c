package replicas

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/mcpxtest"
)

// ownPostgres starts a PostgreSQL server of the test's own (it will be
// stopped and started mid-test, which the shared one must not be) with
// scripts/postgres, and returns its URL and data dir.
func ownPostgres(t *testing.T) (url, dir string) {
	t.Helper()
	script := filepath.Join(mcpxtest.ModuleRoot(), "scripts", "postgres")
	if exec.Command(script, "available").Run() != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("PostgreSQL is not installed: CI must run the replica tests")
		}
		t.Skip("PostgreSQL is not installed: this test starts a server of its own")
	}
	dir = filepath.Join(os.TempDir(), fmt.Sprintf("mx-pg-%d-%d", os.Getpid(), time.Now().UnixNano()))
	out, err := exec.Command(script, "start", dir).Output()
	if err != nil {
		t.Fatalf("scripts/postgres start: %v", err)
	}
	t.Cleanup(func() { _ = exec.Command(script, "stop", dir).Run() })
	return strings.TrimSpace(string(out)), dir
}

// postgresCtl runs scripts/postgres verb dir (and more, such as restart's
// mode).
func postgresCtl(t *testing.T, verb, dir string, more ...string) {
	t.Helper()
	script := filepath.Join(mcpxtest.ModuleRoot(), "scripts", "postgres")
	if out, err := exec.Command(script, append([]string{verb, dir}, more...)...).CombinedOutput(); err != nil {
		t.Fatalf("scripts/postgres %s: %v: %s", verb, err, out)
	}
}
