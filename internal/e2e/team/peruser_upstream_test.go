package team

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// personUpstream is a protected go-sdk MCP server, as startProtected's,
// that records for each call of its whoami tool whose token it carried:
// the token, the user the provider says it is, and the identity header.
type personUpstream struct {
	*httptest.Server
	mu    sync.Mutex
	calls []personCall
}

type personCall struct {
	Token, User, Identity string
}

// identityHeader is the header the per-person server's config names.
const identityHeader = "X-Mcpx-Principal"

func startPersonUpstream(t *testing.T, issuer string) *personUpstream {
	pu := &personUpstream{}
	mux := http.NewServeMux()
	pu.Server = httptest.NewServer(mux)
	t.Cleanup(func() {
		pu.CloseClientConnections()
		pu.Close()
	})
	srv := mcp.NewServer(&mcp.Implementation{Name: "per-person", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "the signed-in user"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		c := personCall{Token: req.Extra.TokenInfo.Extra["token"].(string), User: req.Extra.TokenInfo.UserID, Identity: req.Extra.Header.Get(identityHeader)}
		pu.mu.Lock()
		pu.calls = append(pu.calls, c)
		pu.mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you are " + c.User}}}, nil, nil
	})
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
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
		return &auth.TokenInfo{UserID: info.Username, Extra: map[string]any{"token": token}}, nil
	}
	prm := "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: pu.URL + prm, AllowMissingExpiration: true,
	})(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	mux.Handle(prm, auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: pu.URL + "/mcp", AuthorizationServers: []string{issuer}, ScopesSupported: []string{"openid", "profile"},
	}))
	return pu
}

// last is the latest call the upstream took.
func (pu *personUpstream) last(t *testing.T) personCall {
	t.Helper()
	pu.mu.Lock()
	defer pu.mu.Unlock()
	if len(pu.calls) == 0 {
		t.Fatal("the upstream took no call")
	}
	return pu.calls[len(pu.calls)-1]
}

// signInAs is a person at their browser: it opens the sign-in link mcpx
// gave their host, signs in at the provider's login form as user, and
// follows the redirects back to mcpx's HTTP face.
func signInAs(link, user string) error {
	b := newBrowser()
	id, err := b.open(link)
	if err != nil {
		return err
	}
	code, body, err := b.login(id, user)
	if err == nil && (code != http.StatusOK || !strings.Contains(body, "is signed in to secure for you")) {
		err = fmt.Errorf("the sign-in ended with HTTP %d: %s", code, body)
	}
	return err
}

// browser is a user agent with its own cookies.
type browser struct {
	c      *http.Client
	origin string // the provider's, once the link led there
}

func newBrowser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{c: &http.Client{Jar: jar, Timeout: 20 * time.Second}}
}

// open follows the link to the provider's login form and returns the
// form's authorization request id.
func (b *browser) open(link string) (string, error) {
	resp, err := b.c.Get(link)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	id := resp.Request.URL.Query().Get("authRequestID")
	if id == "" {
		return "", fmt.Errorf("the sign-in link led to %s (HTTP %d), not the login form", resp.Request.URL.Redacted(), resp.StatusCode)
	}
	b.origin = resp.Request.URL.Scheme + "://" + resp.Request.URL.Host
	return id, nil
}

// login submits the login form of request id as user, follows the
// redirects back to mcpx, and returns the last page.
func (b *browser) login(id, user string) (int, string, error) {
	form := url.Values{"username": {user}, "password": {mcpxtest.OIDCPassword}, "id": {id}}
	resp, err := b.c.PostForm(b.origin+"/login/username", form)
	if err != nil {
		return 0, "", err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	return resp.StatusCode, string(body), nil
}

// signInLink finds the sign-in link in a tool error's text.
var signInLink = regexp.MustCompile(`http://\S+/oauth/start\?s=[A-Za-z0-9_%-]+`)

// connectAs connects a go-sdk host over HTTP with tok, declaring URL-mode
// elicitation when urlMode is set.
func connectAs(t *testing.T, endpoint, tok string, urlMode bool) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if urlMode {
		opts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}
		opts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-e2e-peruser", Version: "1"}, opts)
	hc := &http.Client{Transport: harness.Bearer{Token: tok, Next: http.DefaultTransport}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
