package hosts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestInstallOpencodePlugin: mcpx install opencode --plugin writes the
// plugin into opencode's config dir's plugins folder (installing again
// replaces it; a file of the user's of that name is refused); --plugin
// is opencode's alone and takes no --http.
func TestInstallOpencodePlugin(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	want := filepath.Join(e.Vars["XDG_CONFIG_HOME"], "opencode", "plugins", "mcpx.js")
	for range 2 {
		out, errOut, code := e.Run(harness.WaitLong, "install", "opencode", "--plugin")
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("install --plugin: exit %d: %s%s (want it to name %s)", code, out, errOut, want)
		}
	}
	b, err := os.ReadFile(want)
	if err != nil || !strings.Contains(string(b), "McpxPlugin") || strings.Contains(string(b), "import type") {
		t.Fatalf("the installed plugin %s: %v\n%.300s", want, err, b)
	}
	if err := os.WriteFile(want, []byte("export const Mine = async () => ({})\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := e.Run(harness.WaitLong, "install", "opencode", "--plugin"); code == 0 || !strings.Contains(errOut, "not mcpx's") {
		t.Errorf("over the user's file: exit %d: %s", code, errOut)
	}
	for _, args := range [][]string{{"install", "claude-code", "--plugin"}, {"install", "opencode", "--plugin", "--http"}} {
		if _, errOut, code := e.Run(harness.WaitLong, args...); code != 2 {
			t.Errorf("mcpx %v: exit %d, want 2 (usage): %s", args, code, errOut)
		}
	}
}
