package hosts

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"mcpx/internal/mcpxtest"
)

// modelStub is a stand-in for the model API Codex talks to (the Responses
// API, streamed): it answers the first request with one call of the tool
// named in the request's mcpx namespace, and the next, which carries the
// tool's output, with a message. It keeps what Codex sent back.
type modelStub struct{ stubLog }

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
	var tools []string
	for _, t := range body.Tools {
		if t.Type == "namespace" && t.Name == "mcp__mcpx" {
			for _, tt := range t.Tools {
				tools = append(tools, tt.Name)
			}
		}
	}
	s.saw(tools, outputs)
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
// on stdio, by its token's name over HTTP. The demo takes longer to start
// than Codex's own startup timer (10 s): install tells Codex to wait for
// mcpx's servers, so Codex still offers their tools.
func TestRealCodexExec(t *testing.T) {
	t.Parallel()
	bin := mcpxtest.RealHost(t, "codex")
	e := mcpxtest.NewEnv(t)
	e.Vars["STUB_MODEL_KEY"] = "stub" // Codex wants a key; the stub takes any
	stub := &modelStub{}
	srv := httptest.NewServer(stub)
	defer srv.Close()
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
	// Over HTTP Codex is known by the token install minted for it, named
	// "codex".
	runRealRound(t, e, realRound{
		host: "codex", title: "Codex", bin: bin,
		args:      []string{"exec", "--skip-git-repo-check", "call the echo tool"},
		stdioName: "codex-mcp-client", httpName: "codex",
		file: filepath.Join(e.Vars["HOME"], ".codex", "config.toml"), seed: seed,
		tool: "demo__", stub: &stub.stubLog, said: "hello from the model stub",
		slowStart: 11 * time.Second,
	})
}
