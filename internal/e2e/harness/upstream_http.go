package harness

import (
	"encoding/json"
	"os"
	"testing"

	"mcpx/internal/mcpxtest"
)

// WriteServersConfig writes a config of the given servers where the Env
// looks for it, and returns its path.
func WriteServersConfig(t testing.TB, e *mcpxtest.Env, servers map[string]any) string {
	t.Helper()
	b, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := e.Path("config.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
