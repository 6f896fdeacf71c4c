package hosts

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"mcpx/internal/mcpxtest"
)

// TestRealOpencodeRun: after mcpx install opencode, `opencode run` (its
// Anthropic provider pointed at a stub of the Messages API on loopback,
// which answers with one tool call) calls demo__echo through mcpx, on
// stdio and over HTTP; the tools it offers follow its tool filter: by
// clientInfo.name (opencode) on stdio, by its token's name
// (opencode-http) over HTTP.
func TestRealOpencodeRun(t *testing.T) {
	t.Parallel()
	bin := mcpxtest.RealHost(t, "opencode")
	e := mcpxtest.NewEnv(t)
	stub := &anthropicStub{echo: "mcpx_demo__echo", prefix: "mcpx_"}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	file := filepath.Join(e.Vars["HOME"], ".config", "opencode", "opencode.json")
	runRealRound(t, e, realRound{
		host: "opencode", title: "opencode", bin: bin,
		args:      []string{"run", "call the echo tool"},
		install:   []string{"--file", file},
		stdioName: "opencode", httpName: "opencode-http",
		file: file, seed: fmt.Sprintf(`{
  "$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "model": "anthropic/claude-sonnet-4-5",
  "provider": {"anthropic": {"options": {"baseURL": "%s/v1", "apiKey": "sk-stub"}}}
}
`, srv.URL),
		tool: "mcpx_demo__", stub: &stub.stubLog, said: "hello from the claude stub",
	})
}
