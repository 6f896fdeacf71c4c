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

// geminiStub stands in for the Gemini API Gemini CLI talks to: a
// generateContent request that offers mcpx's demo__echo and carries no
// function response is answered with a call of it, any other with text.
// It keeps the mcpx tools offered and the function responses sent.
type geminiStub struct {
	mu      sync.Mutex
	tools   []string
	results []string
}

func (s *geminiStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.URL.Path, "enerateContent") {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"totalTokens":1}`)
		return
	}
	var body struct {
		Contents []struct {
			Parts []map[string]json.RawMessage `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "want a generateContent request", http.StatusBadRequest)
		return
	}
	var results []string
	for _, c := range body.Contents {
		for _, p := range c.Parts {
			if fr, ok := p["functionResponse"]; ok {
				results = append(results, string(fr))
			}
		}
	}
	const echo = "mcp_mcpx_demo__echo"
	offered := false
	s.mu.Lock()
	for _, t := range body.Tools {
		for _, f := range t.FunctionDeclarations {
			if strings.HasPrefix(f.Name, "mcp_mcpx_") {
				if len(results) == 0 && !realHas(s.tools, f.Name) {
					s.tools = append(s.tools, f.Name)
				}
				offered = offered || f.Name == echo
			}
		}
	}
	s.results = append(s.results, results...)
	s.mu.Unlock()
	part := map[string]any{"text": "done"}
	if offered && len(results) == 0 {
		part = map[string]any{"functionCall": map[string]any{"name": echo, "args": map[string]any{"text": "hello from the gemini stub"}}}
	}
	resp, _ := json.Marshal(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
	})
	if r.URL.Query().Get("alt") == "sse" {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", resp)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(resp)
}

// TestRealGeminiPrompt: after mcpx install gemini, `gemini -p` (its API a
// stub on loopback that answers with one function call) calls demo__echo
// through mcpx, on stdio and over HTTP; the tools it offers follow its
// tool filter: by clientInfo.name (gemini-cli-mcp-client) on stdio, by
// its token's name (gemini-http) over HTTP.
func TestRealGeminiPrompt(t *testing.T) {
	bin := mcpxtest.RealHost(t, "gemini")
	e := mcpxtest.NewEnv(t)
	stub := &geminiStub{}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	e.Vars["GEMINI_API_KEY"] = "stub"
	e.Vars["GOOGLE_GEMINI_BASE_URL"] = srv.URL
	home := e.Vars["HOME"]
	file := filepath.Join(home, ".gemini", "settings.json")
	const seed = "{\n  \"security\": {\n    \"auth\": {\n      \"selectedType\": \"gemini-api-key\"\n    }\n  }\n}\n"
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(seed), 0o600); err != nil {
		t.Fatal(err)
	}
	trusted := fmt.Sprintf("{%q: \"TRUST_FOLDER\"}\n", home)
	if err := os.WriteFile(filepath.Join(home, ".gemini", "trustedFolders.json"), []byte(trusted), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := e.WriteConfig(map[string]any{
		"http": map[string]any{"listen": "127.0.0.1:" + realFreePort(t)},
		"hosts": map[string]any{
			"gemini-cli-mcp-client": map[string]any{"tools": []string{"!demo__wait"}},
			"gemini-http":           map[string]any{"tools": []string{"!demo__scan"}},
		},
	}, mcpxtest.Demo{Name: "demo"})
	realStartDaemon(t, e, cfg, e.Path("daemon.log"))

	for i, way := range []string{"stdio", "http"} {
		args := []string{"install", "gemini", "--config", cfg}
		if way == "http" {
			args = append(args, "--http", "--name", "gemini-http")
		}
		if out, stderr, code := e.Run(30*time.Second, args...); code != 0 {
			t.Fatalf("%s: mcpx %v: exit %d\n%s%s", way, args, code, out, stderr)
		}
		installed := realReadFile(t, file)
		stub.mu.Lock()
		stub.tools = nil
		stub.mu.Unlock()
		// -m skips Gemini CLI's model router, which would ask the API
		// which model to use first.
		out := runRealHost(t, e, bin, home, "-m", "gemini-2.5-flash", "--yolo", "-p", "call the echo tool")
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
		if len(results) != i+1 || !strings.Contains(results[i], "hello from the gemini stub") {
			t.Errorf("%s: Gemini CLI sent the model the function responses %q, want the echo's:\n%s", way, results, out)
		}
		refused, kept := "mcp_mcpx_demo__wait", "mcp_mcpx_demo__scan"
		if way == "http" {
			refused, kept = kept, refused
		}
		if !realHas(tools, "mcp_mcpx_demo__echo") || !realHas(tools, kept) || realHas(tools, refused) {
			t.Errorf("%s: Gemini CLI offered %v, want mcp_mcpx_demo__echo and %s, not %s (the host's tool filter)", way, tools, kept, refused)
		}
		un := []string{"uninstall", "gemini"}
		if realReadFile(t, file) != installed {
			t.Logf("%s: gemini rewrote %s after install; uninstall --force puts the backup back", way, file)
			un = append(un, "--force")
		}
		if out, stderr, code := e.Run(30*time.Second, un...); code != 0 {
			t.Fatalf("%s: uninstall: %s%s", way, out, stderr)
		}
		if got := realReadFile(t, file); got != seed {
			t.Errorf("%s: uninstall did not restore %s byte for byte:\n%s", way, file, got)
		}
	}
}
