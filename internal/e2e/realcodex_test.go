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

// modelStub is a stand-in for the model API Codex talks to (the Responses
// API, streamed): it answers the first request with one call of the tool
// named in the request's mcpx namespace, and the next, which carries the
// tool's output, with a message. It keeps what Codex sent back.
type modelStub struct {
	mu      sync.Mutex
	outputs []string // function_call_output values Codex sent
	tools   []string // the mcpx namespace's tool names, from the first request
}

func (s *modelStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Input []struct {
			Type   string          `json:"type"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
		Tools []struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.URL.Path != "/v1/responses" {
		http.Error(w, "want a Responses API request", http.StatusBadRequest)
		return
	}
	var outputs []string
	for _, in := range body.Input {
		if in.Type == "function_call_output" {
			outputs = append(outputs, string(in.Output))
		}
	}
	s.mu.Lock()
	s.outputs = append(s.outputs, outputs...)
	if s.tools == nil {
		for _, t := range body.Tools {
			if t.Type == "namespace" && t.Name == "mcp__mcpx" {
				for _, tt := range t.Tools {
					s.tools = append(s.tools, tt.Name)
				}
			}
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(v map[string]any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
	}
	event(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp"}})
	item := map[string]any{"type": "message", "role": "assistant", "id": "msg", "content": []any{map[string]any{"type": "output_text", "text": "done"}}}
	if len(outputs) == 0 {
		args, _ := json.Marshal(map[string]any{"text": "hello from the model stub"})
		item = map[string]any{"type": "function_call", "id": "fc", "call_id": "call", "namespace": "mcp__mcpx", "name": "demo__echo", "arguments": string(args)}
	}
	event(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	event(map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp", "usage": map[string]any{
		"input_tokens": 1, "input_tokens_details": nil, "output_tokens": 1, "output_tokens_details": nil, "total_tokens": 2}}})
}

// TestRealCodexExec: after mcpx install codex, `codex exec` (whose model
// is a stub on loopback that answers with one tool call) connects to mcpx,
// on stdio and over HTTP, and calls demo__echo through it: the demo
// records the call and Codex hands its result back to the model. The
// tools Codex offers the model follow its tool filter: by clientInfo.name
// on stdio, by its token's name over HTTP.
func TestRealCodexExec(t *testing.T) {
	bin := mcpxtest.RealHost(t, "codex")
	e := mcpxtest.NewEnv(t)
	e.Vars["STUB_MODEL_KEY"] = "stub" // Codex wants a key; the stub takes any
	home := e.Vars["HOME"]
	stub := &modelStub{}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	file := filepath.Join(home, ".codex", "config.toml")
	seed := fmt.Sprintf(`model = "gpt-5"
model_provider = "stub"
approval_policy = "never"

[model_providers.stub]
name = "stub"
base_url = "%s/v1"
wire_api = "responses"
env_key = "STUB_MODEL_KEY"
request_max_retries = 0
stream_max_retries = 0
`, srv.URL)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(seed), 0o600); err != nil {
		t.Fatal(err)
	}
	// Tool filters: on stdio Codex is known by its clientInfo.name, over
	// HTTP by the token install minted for it, named "codex".
	cfg := e.WriteConfig(map[string]any{
		"http": map[string]any{"listen": "127.0.0.1:" + realFreePort(t)},
		"hosts": map[string]any{
			"codex-mcp-client": map[string]any{"tools": []string{"!demo__wait"}},
			"codex":            map[string]any{"tools": []string{"!demo__scan"}},
		},
	}, mcpxtest.Demo{Name: "demo"})
	realStartDaemon(t, e, cfg, e.Path("daemon.log"))

	for i, way := range []string{"stdio", "http"} {
		args := []string{"install", "codex", "--config", cfg}
		if way == "http" {
			args = append(args, "--http")
		}
		if out, stderr, code := e.Run(30*time.Second, args...); code != 0 {
			t.Fatalf("%s: mcpx %v: exit %d\n%s%s", way, args, code, out, stderr)
		}
		stub.mu.Lock()
		stub.tools = nil
		stub.mu.Unlock()
		out := runRealHost(t, e, bin, home, "exec", "--skip-git-repo-check", "call the echo tool")
		calls := 0
		for _, ev := range e.Records("demo") {
			if ev.Method == "tools/call" && ev.Tool == "echo" && ev.Event == demo.EventRequest {
				calls++
			}
		}
		stub.mu.Lock()
		outputs, tools := append([]string(nil), stub.outputs...), stub.tools
		stub.mu.Unlock()
		if calls != i+1 {
			t.Errorf("%s: the demo saw %d echo calls, want %d:\n%s", way, calls, i+1, out)
		}
		if len(outputs) != i+1 || !strings.Contains(outputs[i], "hello from the model stub") {
			t.Errorf("%s: Codex handed the model %q, want the echo's result:\n%s", way, outputs, out)
		}
		refused, kept := "demo__wait", "demo__scan"
		if way == "http" {
			refused, kept = kept, refused
		}
		if listed := " " + strings.Join(tools, " ") + " "; !strings.Contains(listed, " demo__echo ") || !strings.Contains(listed, " "+kept+" ") || strings.Contains(listed, " "+refused+" ") {
			t.Errorf("%s: Codex offered the model the mcpx tools %v, want demo__echo and %s, not %s (the host's tool filter)", way, tools, kept, refused)
		}
		if _, stderr, code := e.Run(30*time.Second, "uninstall", "codex"); code != 0 {
			t.Fatalf("%s: uninstall: %s", way, stderr)
		}
		if got := realReadFile(t, file); got != seed {
			t.Errorf("%s: uninstall did not restore %s byte for byte:\n%s", way, file, got)
		}
	}
}
