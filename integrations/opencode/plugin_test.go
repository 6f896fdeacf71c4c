package opencode

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInstallLoads: the installed file is a module node loads (with the
// plugin's dependencies where opencode provides them) whose exports are
// functions only (opencode calls every export as a plugin), the plugin.
func TestInstallLoads(t *testing.T) {
	dir := t.TempDir()
	path, err := Install(dir)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, "plugins", FileName) {
		t.Fatalf("installed at %s", path)
	}
	js, _ := os.ReadFile(path)
	if strings.Contains(string(js), "import type") || strings.Contains(string(js), ": ToolContext") {
		t.Fatalf("the installed plugin still has TypeScript in it:\n%s", js)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	mods, _ := filepath.Abs("node_modules")
	if _, err := os.Stat(filepath.Join(mods, "@opencode-ai", "plugin")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("integrations/opencode/node_modules is not installed on CI (.ci/run runs npm ci there)")
		}
		t.Skip("integrations/opencode/node_modules is not installed (npm ci)")
	}
	// opencode resolves the plugin's imports from its config directory.
	if err := os.Symlink(mods, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--input-type=module", "-e",
		`const m = await import(process.argv[1]); console.log(Object.entries(m).map(([k, v]) => k + ":" + typeof v).join(","))`,
		"file://"+path).CombinedOutput()
	if err != nil {
		t.Fatalf("node could not load the plugin: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "McpxPlugin:function" {
		t.Errorf("exports = %s, want the plugin function alone", got)
	}
}

// TestInstallReplacesOnlyOurs: installing again replaces mcpx's file; a
// file of the same name mcpx did not write is left alone, with an error.
func TestInstallReplacesOnlyOurs(t *testing.T) {
	dir := t.TempDir()
	if _, err := Install(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(dir); err != nil {
		t.Fatalf("installing again: %v", err)
	}
	path := filepath.Join(dir, "plugins", FileName)
	if err := os.WriteFile(path, []byte("export const Mine = async () => ({})\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(dir); !errors.Is(err, ErrNotOurs) {
		t.Fatalf("over a file of the user's: %v, want ErrNotOurs", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "export const Mine = async () => ({})\n" {
		t.Errorf("the user's file was changed: %s", b)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "plugins"))
	if len(entries) != 1 {
		t.Errorf("the plugins folder holds %d files, want 1 (no temp file left)", len(entries))
	}
}
