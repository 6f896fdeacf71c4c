package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"mcpx/internal/mcpxtest"
)

// mcpx signing in to a protected MCP server whose authorization server is
// a real OpenID provider (zitadel/oidc's example provider, its own
// process): `mcpx login` with $BROWSER set to a headless user agent that
// signs in at the provider's login form as a user would; calls through
// mcpx from go-sdk hosts, in-process and through the daemon; the token
// refreshed before it expires and on a 401 mid-session, with the
// provider's real refresh grant; a second host using the sign-in without
// a prompt; `mcpx logout` revoking the tokens at the provider.

// oauthBrowserEnv makes the test binary the headless user agent; its
// value is a file each run appends a line to (the count of prompts).
const oauthBrowserEnv = "MCPX_E2E_OAUTH_BROWSER"

// oauthFollowEnv makes the test binary a user agent that only follows
// the authorization server's redirects (one that approves at once).
const oauthFollowEnv = "MCPX_E2E_OAUTH_FOLLOW"

func init() {
	if os.Getenv(oauthFollowEnv) == "" && os.Getenv(oauthBrowserEnv) == "" {
		return
	}
	// mcpx hands a browser a page of the user's own that leads to the URL,
	// never the URL itself.
	page := os.Args[len(os.Args)-1]
	target, err := pageTarget(page)
	if err != nil {
		fmt.Fprintf(os.Stderr, "headless browser: %v\n", err)
		os.Exit(1)
	}
	if os.Getenv(oauthFollowEnv) != "" {
		if err := headlessBrowser(context.Background(), target); err != nil {
			fmt.Fprintf(os.Stderr, "headless browser: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if log := os.Getenv(oauthBrowserEnv); log != "" {
		if err := signInAsUser(target); err != nil {
			fmt.Fprintf(os.Stderr, "headless browser: %v\n", err)
			os.Exit(1)
		}
		f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintln(f, "prompted")
			f.Close()
		}
		os.Exit(0)
	}
}

// pageTarget reads the redirect page at a file: URL, as a browser would,
// and returns where it leads; the page must be the user's alone.
func pageTarget(page string) (string, error) {
	u, err := url.Parse(page)
	if err != nil || u.Scheme != "file" {
		return "", fmt.Errorf("given %q, not a file: URL of a page", page)
	}
	fi, err := os.Stat(u.Path)
	if err != nil {
		return "", err
	}
	if fi.Mode().Perm() != 0o600 {
		return "", fmt.Errorf("the page %s has mode %v, want 0600", u.Path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(u.Path)
	if err != nil {
		return "", err
	}
	_, rest, ok := strings.Cut(string(b), `http-equiv="refresh" content="0;url=`)
	target, _, ok2 := strings.Cut(rest, `"`)
	if !ok || !ok2 {
		return "", fmt.Errorf("the page %s leads nowhere: %s", u.Path, b)
	}
	return html.UnescapeString(target), nil
}

// signInAsUser is the user at the browser: it opens the authorization
// URL, which leads to the provider's login form, submits the test user's
// name and password, and follows the redirects back to mcpx.
func signInAsUser(authURL string) error {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 20 * time.Second}
	resp, err := c.Get(authURL)
	if err != nil {
		return err
	}
	resp.Body.Close()
	id := resp.Request.URL.Query().Get("authRequestID")
	if id == "" {
		return fmt.Errorf("the authorization URL led to %s, not the login form", resp.Request.URL.Redacted())
	}
	form := url.Values{"username": {mcpxtest.OIDCUser}, "password": {mcpxtest.OIDCPassword}, "id": {id}}
	resp, err = c.PostForm(resp.Request.URL.Scheme+"://"+resp.Request.URL.Host+"/login/username", form)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "mcpx received the sign-in response and is signed in") {
		return fmt.Errorf("the sign-in ended at %s with HTTP %d: %s", resp.Request.URL.Redacted(), resp.StatusCode, body)
	}
	return nil
}

// protectedServer is a go-sdk MCP server behind go-sdk's bearer token
// middleware, which checks each token at the provider's userinfo
// endpoint; it publishes its protected resource metadata. Tokens in
// expired are refused as a server refuses an expired token.
type protectedServer struct {
	*httptest.Server
	mu      sync.Mutex
	expired map[string]bool
	seen    []string // the tokens it accepted, in order
}

func startProtected(t *testing.T, issuer string) *protectedServer {
	ps := &protectedServer{expired: map[string]bool{}}
	mux := http.NewServeMux()
	ps.Server = httptest.NewServer(mux)
	t.Cleanup(func() {
		ps.CloseClientConnections() // mcpx's streams, should a failed test leave it running
		ps.Close()
	})
	srv := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "the signed-in user"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you are " + req.Extra.TokenInfo.UserID}}}, nil, nil
	})
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		ps.mu.Lock()
		expired := ps.expired[token]
		ps.mu.Unlock()
		if expired {
			return nil, fmt.Errorf("%w: expired", auth.ErrInvalidToken)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, issuer+"userinfo", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var info struct {
			Username string `json:"preferred_username"`
		}
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&info) != nil {
			return nil, fmt.Errorf("%w: userinfo said HTTP %d", auth.ErrInvalidToken, resp.StatusCode)
		}
		ps.mu.Lock()
		ps.seen = append(ps.seen, token)
		ps.mu.Unlock()
		return &auth.TokenInfo{UserID: info.Username}, nil
	}
	prm := "/.well-known/oauth-protected-resource/mcp"
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: ps.URL + prm, AllowMissingExpiration: true,
	})(mcpHandler))
	mux.Handle(prm, auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: ps.URL + "/mcp", AuthorizationServers: []string{issuer}, ScopesSupported: []string{"openid", "profile"},
	}))
	return ps
}

func (ps *protectedServer) expire(token string) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.expired[token] = true
}

func TestOAuthSignIn(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		redirect := "http://127.0.0.1:" + mcpxtest.FreePort(t) + "/callback"
		op := mcpxtest.StartOIDC(t, redirect)
		ps := startProtected(t, op.Issuer)
		cfg := e.Path("config.json")
		writeJSONFile(t, cfg, map[string]any{"mcpServers": map[string]any{"secure": map[string]any{
			"url": ps.URL + "/mcp", "oauth": map[string]any{"clientId": mcpxtest.OIDCClient, "redirectUri": redirect},
		}}})

		// Before any sign-in, a call says what to do.
		cs := connectGoSDK(t, e, mode, cfg, "2025-11-25", newProgressLog())
		_, err := callWhoami(cs)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != -31006 || !strings.Contains(rpcErr.Message, "run `mcpx login secure`") {
			t.Fatalf("a call before the sign-in: %v, want -31006 saying to run mcpx login", err)
		}

		prompts := e.Path("prompts.log")
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		out := mcpxLogin(t, e, cfg, exe, prompts)
		if !strings.Contains(out, "signed in to secure") {
			t.Fatalf("mcpx login printed %q", out)
		}
		rec := readSignIn(t, e)
		if rec.Token.RefreshToken == "" || rec.Client.ClientID != mcpxtest.OIDCClient {
			t.Fatalf("the stored sign-in: client %q, refresh token present %v", rec.Client.ClientID, rec.Token.RefreshToken != "")
		}
		if fi, err := os.Stat(signInPath(e)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("the sign-in file: %v, mode %v; want 0600", err, fi.Mode())
		}

		// The same host's next call uses the sign-in.
		if text, err := callWhoami(cs); err != nil || text != "you are "+mcpxtest.OIDCUser {
			t.Fatalf("a call after the sign-in: %q, %v", text, err)
		}

		// Mid-session, the server refuses the access token as expired:
		// mcpx refreshes it at the provider and retries.
		first := rec.Token.AccessToken
		ps.expire(first)
		if text, err := callWhoami(cs); err != nil || text != "you are "+mcpxtest.OIDCUser {
			t.Fatalf("a call with the token refused as expired: %q, %v", text, err)
		}
		second := readSignIn(t, e).Token.AccessToken
		if second == first {
			t.Fatal("the refused token was not refreshed")
		}
		// The token nearing its expiry: mcpx refreshes it before the call.
		setExpiry(t, e, time.Now().Add(10*time.Second))
		if text, err := callWhoami(cs); err != nil || text != "you are "+mcpxtest.OIDCUser {
			t.Fatalf("a call with the token about to expire: %q, %v", text, err)
		}
		third := readSignIn(t, e).Token.AccessToken
		if third == second || ps.lastSeen() != third {
			t.Fatal("the token about to expire was not refreshed before the call")
		}

		// A second host uses the sign-in without a prompt.
		cs2 := connectGoSDK(t, e, mode, cfg, "2026-07-28", newProgressLog())
		if text, err := callWhoami(cs2); err != nil || text != "you are "+mcpxtest.OIDCUser {
			t.Fatalf("the second host's call: %q, %v", text, err)
		}
		if n := countLines(t, prompts); n != 1 {
			t.Fatalf("the user was prompted %d times, want once", n)
		}

		// Logout revokes the tokens at the provider and deletes them.
		stdout, stderr, code := e.Run(30*time.Second, "logout", "--config", cfg, "secure")
		if code != 0 || !strings.Contains(stdout, "tokens revoked and deleted") {
			t.Fatalf("mcpx logout: exit %d\n%s%s", code, stdout, stderr)
		}
		if status := userinfo(t, op.Issuer, third); status == http.StatusOK {
			t.Fatalf("the provider answers userinfo with the revoked token: HTTP %d", status)
		}
		ps.mu.Lock()
		t.Logf("%s: signed in once; the server accepted %d requests with 3 access tokens in turn; logout revoked the last", mode, len(ps.seen))
		ps.mu.Unlock()
		ps.expire(third) // the server has seen it: it would still let it in otherwise
		_, err = callWhoami(cs)
		if !errors.As(err, &rpcErr) || rpcErr.Code != -31006 {
			t.Fatalf("a call after logout: %v, want -31006", err)
		}
	})
}

func (ps *protectedServer) lastSeen() string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if len(ps.seen) == 0 {
		return ""
	}
	return ps.seen[len(ps.seen)-1]
}

func callWhoami(cs *mcp.ClientSession) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "secure__whoami", Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		return "", errors.New("tool error: " + text)
	}
	return text, nil
}

// mcpxLogin runs mcpx login with $BROWSER the headless user agent.
func mcpxLogin(t *testing.T, e *mcpxtest.Env, cfg, exe, prompts string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := e.Command(ctx, "login", "--config", cfg, "secure")
	cmd.Env = append(cmd.Env, "BROWSER="+exe+" -test.run=NONE", oauthBrowserEnv+"="+prompts)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) || err != nil {
		t.Fatalf("mcpx login: %v\n%s", err, out)
	}
	// The page that led the browser to the sign-in went with it.
	if pages, _ := filepath.Glob(filepath.Join(e.Vars["XDG_RUNTIME_DIR"], "mcpx", "pages", "*")); len(pages) != 0 {
		t.Errorf("mcpx login left its pages: %v", pages)
	}
	return string(out)
}

// signIn is the part of the stored sign-in the test reads.
type signIn struct {
	Client struct {
		ClientID string `json:"clientId"`
	} `json:"client"`
	Token struct {
		AccessToken  string    `json:"accessToken"`
		RefreshToken string    `json:"refreshToken"`
		Expiry       time.Time `json:"expiry"`
	} `json:"token"`
}

func signInPath(e *mcpxtest.Env) string {
	return filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "oauth", "secure.json")
}

func readSignIn(t *testing.T, e *mcpxtest.Env) signIn {
	t.Helper()
	var s signIn
	b, err := os.ReadFile(signInPath(e))
	if err != nil || json.Unmarshal(b, &s) != nil {
		t.Fatalf("reading the sign-in: %v", err)
	}
	return s
}

// setExpiry rewrites the stored token's expiry, as time passing would.
func setExpiry(t *testing.T, e *mcpxtest.Env, at time.Time) {
	t.Helper()
	var doc map[string]any
	b, err := os.ReadFile(signInPath(e))
	if err != nil || json.Unmarshal(b, &doc) != nil {
		t.Fatalf("reading the sign-in: %v", err)
	}
	tok := doc["token"].(map[string]any)
	tok["expiry"] = at.Format(time.RFC3339Nano)
	tok["obtained"] = at.Add(-time.Hour).Format(time.RFC3339Nano) // an hour's token
	writeJSONFile(t, signInPath(e), doc)
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func userinfo(t *testing.T, issuer, token string) int {
	req, _ := http.NewRequest(http.MethodGet, issuer+"userinfo", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func countLines(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return strings.Count(string(b), "\n")
}
