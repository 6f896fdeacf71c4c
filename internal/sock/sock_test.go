package sock

import (
	"os"
	"testing"
)

// helperEnv, when set, makes the test binary a helper process; see TestMain.
const helperEnv = "MCPX_SOCK_TEST_HELPER_LOCK"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		os.Exit(lockHelper(path))
	}
	os.Exit(m.Run())
}

// shortDir returns a fresh directory whose path leaves room for a socket
// name within the unix socket path limit.
func shortDir(t *testing.T) string {
	t.Helper()
	if dir := t.TempDir(); len(dir) < 60 {
		return dir
	}
	dir, err := os.MkdirTemp("", "sock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if len(dir) >= 60 {
		t.Fatalf("temp dir %s is too long for a unix socket path; set TMPDIR shorter", dir)
	}
	return dir
}
