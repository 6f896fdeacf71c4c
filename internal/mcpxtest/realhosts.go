package mcpxtest

import (
	"os"
	"path/filepath"
	"testing"
)

// HostsDir is the directory of the real MCP hosts the install tests
// drive, installed from npm at pinned versions: <module root>/test/hosts.
func HostsDir() string { return filepath.Join(moduleRoot(), "test", "hosts") }

// RealHost returns the path of a real host's executable (name is its
// npm bin: opencode, claude, gemini, codex). When test/hosts/node_modules
// is missing the test is skipped, saying how to install it; under CI
// (CI set), where .ci/run installs it, it fails instead.
func RealHost(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(HostsDir(), "node_modules", ".bin", name)
	if fileExists(p) {
		return p
	}
	msg := p + " is not installed: run `npm ci --prefix test/hosts` from the module root"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
