package mcpxtest

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// InteropDir is the directory of the interop tests' npm packages and
// scripts: <module root>/test/interop.
func InteropDir() string { return filepath.Join(moduleRoot(), "test", "interop") }

// Node returns the path of the node executable and the interop directory,
// whose node_modules must be installed. A missing node or node_modules
// fails the test (it does not skip it): CI installs both.
func Node(t testing.TB) (node, interop string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH (%v): the interop tests need Node.js (v20 or later)", err)
	}
	interop = InteropDir()
	if !fileExists(filepath.Join(interop, "node_modules", "@modelcontextprotocol", "sdk", "package.json")) {
		t.Fatalf("%s/node_modules is not installed: run `npm ci --prefix test/interop` from the module root", interop)
	}
	return node, interop
}

// NodeModule returns the path of a file inside an installed npm package of
// the interop directory, failing the test if it is missing.
func NodeModule(t testing.TB, pkg, file string) string {
	t.Helper()
	_, interop := Node(t)
	p := filepath.Join(interop, "node_modules", filepath.FromSlash(pkg), filepath.FromSlash(file))
	if !fileExists(p) {
		t.Fatalf("%s is missing: run `npm ci --prefix test/interop` from the module root", p)
	}
	return p
}
