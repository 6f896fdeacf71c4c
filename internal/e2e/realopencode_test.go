package e2e

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/mcpxtest"
)

// TestRealOpencodeRun: after mcpx install opencode, `opencode run` (its
// Anthropic provider pointed at a stub of the Messages API on loopback,
// which answers with one tool call) calls demo__echo through mcpx, on
// stdio and over HTTP; the tools it offers follow its tool filter: by
// clientInfo.name (opencode) on stdio, by its token's name
// (opencode-http) over HTTP.
func TestRealOpencodeRun(t *testing.T) {
	bin := mcpxtest.RealHost(t, "opencode")
	e := mcpxtest.NewEnv(t)
	stub := &anthropicStub{echo: "mcpx_demo__echo", prefix: "mcpx_"}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	home := e.Vars["HOME"]
	file := filepath.Join(home, ".config", "opencode", "opencode.json")
	seed := fmt.Sprintf(`{
  "$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "model": "anthropic/claude-sonnet-4-5",
  "provider": {"anthropic": {"options": {"baseURL": "%s/v1", "apiKey": "sk-stub"}}}
}
`, srv.URL)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(seed), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := e.WriteConfig(map[string]any{
		"http": map[string]any{"listen": "127.0.0.1:" + realFreePort(t)},
		"hosts": map[string]any{
			"opencode":      map[string]any{"tools": []string{"!demo__wait"}},
			"opencode-http": map[string]any{"tools": []string{"!demo__scan"}},
		},
	}, mcpxtest.Demo{Name: "demo"})
	realStartDaemon(t, e, cfg, e.Path("daemon.log"))

	for i, way := range []string{"stdio", "http"} {
		args := []string{"install", "opencode", "--config", cfg, "--file", file}
		if way == "http" {
			args = append(args, "--http", "--name", "opencode-http")
		}
		if out, stderr, code := e.Run(30*time.Second, args...); code != 0 {
			t.Fatalf("%s: mcpx %v: exit %d\n%s%s", way, args, code, out, stderr)
		}
		stub.mu.Lock()
		stub.tools = nil
		stub.mu.Unlock()
		out := runRealHost(t, e, bin, home, "run", "call the echo tool")
		calls := 0
		for _, ev := range e.Records("demo") {
			if ev.Method == "tools/call" && ev.Tool == "echo" && ev.Event == demo.EventRequest {
				calls++
			}
		}
		stub.mu.Lock()
		results, tools := append([]string(nil), stub.results...), stub.tools
		stub.mu.Unlock()
		if calls != i+1 {
			t.Errorf("%s: the demo saw %d echo calls, want %d:\n%s", way, calls, i+1, out)
		}
		if len(results) != i+1 || !strings.Contains(results[i], "hello from the claude stub") {
			t.Errorf("%s: opencode sent the model the tool results %q, want the echo's:\n%s", way, results, out)
		}
		refused, kept := "mcpx_demo__wait", "mcpx_demo__scan"
		if way == "http" {
			refused, kept = kept, refused
		}
		if !realHas(tools, "mcpx_demo__echo") || !realHas(tools, kept) || realHas(tools, refused) {
			t.Errorf("%s: opencode offered %v, want mcpx_demo__echo and %s, not %s (the host's tool filter)", way, tools, kept, refused)
		}
		if out, stderr, code := e.Run(30*time.Second, "uninstall", "opencode"); code != 0 {
			t.Fatalf("%s: uninstall: %s%s", way, out, stderr)
		}
		if got := realReadFile(t, file); got != seed {
			t.Errorf("%s: uninstall did not restore %s byte for byte:\n%s", way, file, got)
		}
	}
}
