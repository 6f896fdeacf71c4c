package harness

import (
	"encoding/json"
	"os"
	"testing"

	"mcpx/internal/mcpxtest"
)

// WriteServers writes a config with the given server entries.
func WriteServers(t *testing.T, e *mcpxtest.Env, settings map[string]any, servers map[string]any) string {
	t.Helper()
	doc := map[string]any{"mcpServers": servers}
	if settings != nil {
		doc["mcpx"] = settings
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := e.Path("config.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
