package harness

import (
	"strings"
	"testing"

	"mcpx/internal/mcpxtest"
)

// CliRun returns a runner of mcpx verbs on cfg that fails the test unless
// the verb exits wantCode, and returns its stdout and stderr.
func CliRun(t *testing.T, e *mcpxtest.Env, cfg string) func(wantCode int, args ...string) string {
	return func(wantCode int, args ...string) string {
		t.Helper()
		out, stderr, code := e.Run(RelayWait, append(args, "--config", cfg)...)
		if code != wantCode {
			t.Fatalf("mcpx %s: exit %d, want %d\nstdout %s\nstderr %s", strings.Join(args, " "), code, wantCode, out, stderr)
		}
		return out + stderr
	}
}
