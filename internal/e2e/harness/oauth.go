package harness

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

// OauthBrowserEnv makes the test binary the headless user agent; its
// value is a file each run appends a line to (the count of prompts).
const OauthBrowserEnv = "MCPX_E2E_OAUTH_BROWSER"

// OauthFollowEnv makes the test binary a user agent that only follows
// the authorization server's redirects (one that approves at once).
const OauthFollowEnv = "MCPX_E2E_OAUTH_FOLLOW"

func init() {
	if os.Getenv(OauthFollowEnv) == "" && os.Getenv(OauthBrowserEnv) == "" {
		return
	}
	// mcpx hands a browser a page of the user's own that leads to the URL,
	// never the URL itself.
	page := os.Args[len(os.Args)-1]
	target, err := PageTarget(page)
	if err != nil {
		fmt.Fprintf(os.Stderr, "headless browser: %v\n", err)
		os.Exit(1)
	}
	if os.Getenv(OauthFollowEnv) != "" {
		if err := HeadlessBrowser(context.Background(), target); err != nil {
			fmt.Fprintf(os.Stderr, "headless browser: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if log := os.Getenv(OauthBrowserEnv); log != "" {
		if err := SignInAsUser(target); err != nil {
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

// PageTarget reads the redirect page at a file: URL, as a browser would,
// and returns where it leads; the page must be the user's alone.
func PageTarget(page string) (string, error) {
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

// SignInAsUser is the user at the browser: it opens the authorization
// URL, which leads to the provider's login form, submits the test user's
// name and password, and follows the redirects back to mcpx.
func SignInAsUser(authURL string) error {
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

// ProtectedServer is a go-sdk MCP server behind go-sdk's bearer token
// middleware, which checks each token at the provider's userinfo
// endpoint; it publishes its protected resource metadata. Tokens in
// expired are refused as a server refuses an expired token.
type ProtectedServer struct {
	*httptest.Server
	Mu      sync.Mutex
	expired map[string]bool
	Seen    []string // the tokens it accepted, in order
}

func StartProtected(t *testing.T, issuer string) *ProtectedServer {
	ps := &ProtectedServer{expired: map[string]bool{}}
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
		ps.Mu.Lock()
		expired := ps.expired[token]
		ps.Mu.Unlock()
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
		ps.Mu.Lock()
		ps.Seen = append(ps.Seen, token)
		ps.Mu.Unlock()
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

func (ps *ProtectedServer) Expire(token string) {
	ps.Mu.Lock()
	defer ps.Mu.Unlock()
	ps.expired[token] = true
}

func (ps *ProtectedServer) LastSeen() string {
	ps.Mu.Lock()
	defer ps.Mu.Unlock()
	if len(ps.Seen) == 0 {
		return ""
	}
	return ps.Seen[len(ps.Seen)-1]
}

func CallWhoami(cs *mcp.ClientSession) (string, error) {
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

// McpxLogin runs mcpx login with $BROWSER the headless user agent.
func McpxLogin(t *testing.T, e *mcpxtest.Env, cfg, exe, prompts string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := e.Command(ctx, "login", "--config", cfg, "secure")
	cmd.Env = append(cmd.Env, "BROWSER="+exe+" -test.run=NONE", OauthBrowserEnv+"="+prompts)
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

func WriteJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func CountLines(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return strings.Count(string(b), "\n")
}
