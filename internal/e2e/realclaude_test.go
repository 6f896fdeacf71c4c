package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/demo"
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

	mu      sync.Mutex
	tools   []string
	results []string
}

func (s *anthropicStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.Contains(r.URL.Path, "count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"input_tokens":1}`)
		return
	}
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "want a Messages API request", http.StatusBadRequest)
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
	s.mu.Lock()
	for _, t := range body.Tools {
		if strings.HasPrefix(t.Name, s.prefix) {
			if len(results) == 0 && !realHas(s.tools, t.Name) {
				s.tools = append(s.tools, t.Name)
			}
			offered = offered || t.Name == s.echo
		}
	}
	s.results = append(s.results, results...)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(v map[string]any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
	}
	event(map[string]any{"type": "message_start", "message": map[string]any{"id": "msg", "type": "message", "role": "assistant", "model": body.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}})
	stop := "end_turn"
	if len(results) == 0 && offered {
		args, _ := json.Marshal(map[string]any{"text": "hello from the claude stub"})
		event(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "tool_use", "id": "toolu_1", "name": s.echo, "input": map[string]any{}}})
		event(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
		stop = "tool_use"
	} else {
		event(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		event(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": "done"}})
	}
	event(map[string]any{"type": "content_block_stop", "index": 0})
	event(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 1}})
	event(map[string]any{"type": "message_stop"})
}

func realHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestRealClaudePrint: after mcpx install claude-code, `claude -p` (its
// model a stub on loopback that answers with one tool call) calls
// demo__echo through mcpx, on stdio and over HTTP; the tools it offers
// follow its tool filter: by clientInfo.name (claude-code) on stdio, by
// the name of the token install minted (claude-http) over HTTP.
func TestRealClaudePrint(t *testing.T) {
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
	home := e.Vars["HOME"]
	file := filepath.Join(home, ".claude.json")
	const seed = "{\n  \"numStartups\": 1\n}\n"
	if err := os.WriteFile(file, []byte(seed), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := e.WriteConfig(map[string]any{
		"http": map[string]any{"listen": "127.0.0.1:" + realFreePort(t)},
		"hosts": map[string]any{
			"claude-code": map[string]any{"tools": []string{"!demo__wait"}},
			"claude-http": map[string]any{"tools": []string{"!demo__scan"}},
		},
	}, mcpxtest.Demo{Name: "demo"})
	realStartDaemon(t, e, cfg, e.Path("daemon.log"))

	for i, way := range []string{"stdio", "http"} {
		args := []string{"install", "claude-code", "--config", cfg}
		if way == "http" {
			args = append(args, "--http", "--name", "claude-http")
		}
		if out, stderr, code := e.Run(30*time.Second, args...); code != 0 {
			t.Fatalf("%s: mcpx %v: exit %d\n%s%s", way, args, code, out, stderr)
		}
		stub.mu.Lock()
		stub.tools = nil
		stub.mu.Unlock()
		out := runRealHost(t, e, bin, home, "-p", "call the echo tool", "--allowedTools", "mcp__mcpx__demo__echo")
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
			t.Errorf("%s: Claude Code sent the model the tool results %q, want the echo's:\n%s", way, results, out)
		}
		refused, kept := "mcp__mcpx__demo__wait", "mcp__mcpx__demo__scan"
		if way == "http" {
			refused, kept = kept, refused
		}
		if !realHas(tools, "mcp__mcpx__demo__echo") || !realHas(tools, kept) || realHas(tools, refused) {
			t.Errorf("%s: Claude Code offered %v, want demo__echo and %s, not %s (the host's tool filter)", way, tools, kept, refused)
		}
		if out, stderr, code := e.Run(30*time.Second, "uninstall", "claude-code", "--force"); code != 0 {
			t.Fatalf("%s: uninstall: %s%s", way, out, stderr)
		}
		if got := realReadFile(t, file); got != seed {
			t.Errorf("%s: uninstall --force did not restore %s byte for byte:\n%s", way, file, got)
		}
	}
}
