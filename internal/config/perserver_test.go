package config

import (
	"strings"
	"testing"
)

// TestPerServer: with PerServer, a server's own mistakes (an unset
// variable, a bad field, a bad name) leave it out of Servers and in
// Unconfigured with its error, and the other servers load; a mistake
// outside the servers' entries still fails the file; without PerServer
// the first server's mistake does.
func TestPerServer(t *testing.T) {
	data := []byte(`{"mcpServers": {
		"ok": {"command": "x"},
		"remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${MCPX_NO_SUCH_VAR}"}},
		"typo": {"comand": "x"},
		"bad.name": {"command": "x"}
	}}`)
	c, err := Parse(data, "c.json", &LoadOptions{PerServer: true, Lookup: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("Parse with PerServer: %v", err)
	}
	if len(c.Servers) != 1 || c.Servers["ok"] == nil {
		t.Errorf("Servers = %v, want ok alone", c.Names())
	}
	want := map[string]string{
		"remote":   "mcpServers.remote.headers.Authorization: ${MCPX_NO_SUCH_VAR} is not set",
		"typo":     `mcpServers.typo.comand: unknown field (did you mean "command"?)`,
		"bad.name": `mcpServers["bad.name"]: invalid server name: want 1 to 48 characters of [A-Za-z0-9_-]`,
	}
	if len(c.Unconfigured) != len(want) {
		t.Errorf("Unconfigured has %d servers, want %d: %v", len(c.Unconfigured), len(want), c.Unconfigured)
	}
	for name, w := range want {
		if e := c.Unconfigured[name]; e == nil || e.Reason() != w || !strings.HasPrefix(e.Error(), "config ") {
			t.Errorf("Unconfigured[%q] = %v, want %q", name, e, w)
		}
	}

	if _, err := Parse(data, "c.json", &LoadOptions{Lookup: func(string) (string, bool) { return "", false }}); err == nil {
		t.Error("Parse without PerServer accepted a server's mistake")
	}
	if _, err := Parse([]byte(`{"mcpServers": {"ok": {"command": "x"}}, "mcpx": {"idleTimeout": "soon"}}`), "c.json", &LoadOptions{PerServer: true}); err == nil {
		t.Error("Parse with PerServer accepted a mistake in the mcpx block")
	}
}
