package hosts

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"mcpx/internal/mcpxtest"
)

// anthropicStub stands in for the Messages API Claude Code talks to
// (streamed): it answers with one call of mcpx's demo__echo while no tool
// result is in the conversation, then with text. It keeps the mcpx tools
// Claude Code offered and the tool results it sent.
type anthropicStub struct {
	// echo is the name the host gives mcpx's demo__echo; prefix starts
	// the names of mcpx's tools.
	echo, prefix string
	stubLog
}

func (s *anthropicStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body := readMessages(w, r)
	if body == nil {
		return
	}
	var results []string
	for _, m := range body.Messages {
		var blocks []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type == "tool_result" {
					results = append(results, string(b.Content))
				}
			}
		}
	}
	offered := false
	var tools []string
	for _, t := range body.Tools {
		if strings.HasPrefix(t.Name, s.prefix) {
			tools = append(tools, t.Name)
			offered = offered || t.Name == s.echo
		}
	}
	s.saw(tools, results)
	if len(results) == 0 && offered {
		args, _ := json.Marshal(map[string]any{"text": "hello from the claude stub"})
		streamTurn(w, body.Model, s.echo, "toolu_1", string(args))
		return
	}
	streamTurn(w, body.Model, "", "", "")
}

// TestRealClaudePrint: after mcpx install claude-code, `claude -p` (its
// model a stub on loopback that answers with one tool call) calls
// demo__echo through mcpx, on stdio and over HTTP; the tools it offers
// follow its tool filter: by clientInfo.name (claude-code) on stdio, by
// the name of the token install minted (claude-http) over HTTP.
func TestRealClaudePrint(t *testing.T) {
	t.Parallel()
	bin := mcpxtest.RealHost(t, "claude")
	e := mcpxtest.NewEnv(t)
	stub := &anthropicStub{echo: "mcp__mcpx__demo__echo", prefix: "mcp__mcpx__"}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	e.Vars["ANTHROPIC_BASE_URL"] = srv.URL
	e.Vars["ANTHROPIC_API_KEY"] = "sk-stub"
	e.Vars["ENABLE_TOOL_SEARCH"] = "false" // else Claude Code hides MCP tools behind a search of its own
	// Claude Code composes its first turn without waiting for MCP servers
	// still starting (nonblocking, the default): under load mcpx serve (a
	// race build) took 2-10 s to connect, and the turn went out without
	// mcpx's tools. Its own harness connects blocking, as here, within the
	// connect timeout.
	e.Vars["MCP_CONNECTION_NONBLOCKING"] = "0"
	e.Vars["MCP_CONNECT_TIMEOUT_MS"] = "60000"
	runRealRound(t, e, realRound{
		host: "claude-code", title: "Claude Code", bin: bin,
		args:      []string{"-p", "call the echo tool", "--allowedTools", "mcp__mcpx__demo__echo"},
		stdioName: "claude-code", httpName: "claude-http",
		file: filepath.Join(e.Vars["HOME"], ".claude.json"), seed: "{\n  \"numStartups\": 1\n}\n",
		tool: "mcp__mcpx__demo__", stub: &stub.stubLog, said: "hello from the claude stub",
		force: func(string) bool { return true }, // Claude Code keeps its own state in that file
	})
}
