package hosts

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpx/internal/mcpxtest"
)

// geminiStub stands in for the Gemini API Gemini CLI talks to: a
// generateContent request that offers mcpx's demo__echo and carries no
// function response is answered with a call of it, any other with text.
// It keeps the mcpx tools offered and the function responses sent.
type geminiStub struct{ stubLog }

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
	var tools []string
	for _, t := range body.Tools {
		for _, f := range t.FunctionDeclarations {
			if strings.HasPrefix(f.Name, "mcp_mcpx_") {
				tools = append(tools, f.Name)
				offered = offered || f.Name == echo
			}
		}
	}
	s.saw(tools, results)
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
	t.Parallel()
	bin := mcpxtest.RealHost(t, "gemini")
	e := mcpxtest.NewEnv(t)
	stub := &geminiStub{}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	e.Vars["GEMINI_API_KEY"] = "stub"
	e.Vars["GOOGLE_GEMINI_BASE_URL"] = srv.URL
	home := e.Vars["HOME"]
	file := filepath.Join(home, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	trusted := fmt.Sprintf("{%q: \"TRUST_FOLDER\"}\n", home)
	if err := os.WriteFile(filepath.Join(home, ".gemini", "trustedFolders.json"), []byte(trusted), 0o600); err != nil {
		t.Fatal(err)
	}
	runRealRound(t, e, realRound{
		host: "gemini", title: "Gemini CLI", bin: bin,
		// -m skips Gemini CLI's model router, which would ask the API
		// which model to use first.
		args:      []string{"-m", "gemini-2.5-flash", "--yolo", "-p", "call the echo tool"},
		stdioName: "gemini-cli-mcp-client", httpName: "gemini-http",
		file: file, seed: "{\n  \"security\": {\n    \"auth\": {\n      \"selectedType\": \"gemini-api-key\"\n    }\n  }\n}\n",
		tool: "mcp_mcpx_demo__", stub: &stub.stubLog, said: "hello from the gemini stub",
		force: func(installed string) bool {
			if realReadFile(t, file) == installed {
				return false
			}
			t.Logf("gemini rewrote %s after install; uninstall --force puts the backup back", file)
			return true
		},
	})
}
