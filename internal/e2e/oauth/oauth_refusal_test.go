package oauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// hostileAS is a protected MCP server and an authorization server on one
// origin whose answers a test makes hostile.
type hostileAS struct {
	*httptest.Server
	tokenEndpoint string // the metadata's token_endpoint ("" its own)
	padMetadata   int    // bytes of padding in the metadata
	forgeState    bool   // the redirect carries another state
	tokenRequests atomic.Int64
}

func startHostileAS(t *testing.T) *hostileAS {
	h := &hostileAS{}
	mux := http.NewServeMux()
	h.Server = httptest.NewServer(mux)
	t.Cleanup(h.Close)
	js := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+h.URL+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		js(w, map[string]any{"resource": h.URL + "/mcp", "authorization_servers": []string{h.URL}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		md := map[string]any{"issuer": h.URL, "authorization_endpoint": h.URL + "/authorize", "token_endpoint": h.URL + "/token",
			"code_challenge_methods_supported": []string{"S256"}, "padding": strings.Repeat("x", h.padMetadata)}
		if h.tokenEndpoint != "" {
			md["token_endpoint"] = h.tokenEndpoint
		}
		js(w, md)
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		state := q.Get("state")
		if h.forgeState {
			state = "forged-" + state
		}
		u, _ := url.Parse(q.Get("redirect_uri"))
		u.RawQuery = url.Values{"code": {"c"}, "state": {state}}.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		h.tokenRequests.Add(1)
		js(w, map[string]any{"access_token": "stolen", "token_type": "Bearer"})
	})
	return h
}

// TestOAuthLoginRefusals: mcpx login against hostile answers, each
// refused with an error that says what and why, nothing stored, no token
// requested.
func TestOAuthLoginRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(h *hostileAS, oauth map[string]any)
		code   int
		stderr string
	}{
		{"token endpoint at another origin", func(h *hostileAS, _ map[string]any) { h.tokenEndpoint = "http://127.0.0.1:9/token" },
			3, "puts its token_endpoint outside its own origin"},
		{"oversized metadata", func(h *hostileAS, _ map[string]any) { h.padMetadata = 1 << 20 },
			3, "the response is larger than 262144 bytes; mcpx read no further"},
		{"state mismatch", func(h *hostileAS, _ map[string]any) { h.forgeState = true },
			3, "the sign-in redirect's state does not match the one mcpx sent: the response was discarded"},
		{"redirect to a non-loopback address", func(_ *hostileAS, o map[string]any) { o["redirectUri"] = "http://attacker.example:8080/cb" },
			2, "oauth.redirectUri: must be an http URL on a loopback address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := mcpxtest.NewEnv(t)
			h := startHostileAS(t)
			o := map[string]any{"clientId": "mcpx"}
			tc.setup(h, o)
			cfg := e.Path("config.json")
			harness.WriteJSONFile(t, cfg, map[string]any{"mcpServers": map[string]any{"secure": map[string]any{"url": h.URL + "/mcp", "oauth": o}}})
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := e.Command(ctx, "login", "--config", cfg, "secure")
			// The user agent follows the authorization server's redirects.
			cmd.Env = append(cmd.Env, "BROWSER="+exe+" -test.run=NONE", harness.OauthFollowEnv+"=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err = cmd.Run()
			code := cmd.ProcessState.ExitCode()
			if err == nil || code != tc.code || !strings.Contains(stderr.String(), tc.stderr) {
				t.Fatalf("mcpx login: exit %d, stderr %q; want exit %d and %q", code, stderr.String(), tc.code, tc.stderr)
			}
			if _, err := os.Stat(harness.SignInPath(e)); !os.IsNotExist(err) {
				t.Fatalf("a sign-in was stored: %v", err)
			}
			if h.tokenRequests.Load() != 0 {
				t.Fatal("the token endpoint was asked")
			}
			t.Logf("refused: %s", strings.TrimSpace(stderr.String()))
		})
	}
}
