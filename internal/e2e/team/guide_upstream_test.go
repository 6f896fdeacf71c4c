package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// startTracker is the guide's tracker: a go-sdk MCP server that needs
// OAuth at issuer, with whoami (recorded as personUpstream records it)
// and close_issue, which only the developers group may call.
func startTracker(t *testing.T, issuer string) *personUpstream {
	pu := &personUpstream{}
	mux := http.NewServeMux()
	pu.Server = httptest.NewServer(mux)
	t.Cleanup(func() {
		pu.CloseClientConnections()
		pu.Close()
	})
	srv := mcp.NewServer(&mcp.Implementation{Name: "tracker", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "the signed-in user"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		c := personCall{Token: req.Extra.TokenInfo.Extra["token"].(string), User: req.Extra.TokenInfo.UserID, Identity: req.Extra.Header.Get(identityHeader)}
		pu.mu.Lock()
		pu.calls = append(pu.calls, c)
		pu.mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you are " + c.User}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "close_issue", Description: "closes an issue"}, func(_ context.Context, req *mcp.CallToolRequest, in struct {
		ID string `json:"id"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Extra.TokenInfo.UserID + " closed " + in.ID}}}, nil, nil
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

// callTracker calls the tracker's tool as cs and returns its text; a
// tool error is an error holding the text.
func callTracker(cs *mcp.ClientSession, tool string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tracker__" + tool, Arguments: args})
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

// signInLinkOf is the URL of the -32042 a call before signing in gets.
func signInLinkOf(t *testing.T, cs *mcp.ClientSession, who string) string {
	t.Helper()
	text, err := callTracker(cs, "whoami", map[string]any{})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeURLElicitationRequired {
		t.Fatalf("%s's call before signing in: %q, %v; want -32042", who, text, err)
	}
	var data struct{ Elicitations []mcp.ElicitParams }
	if json.Unmarshal(rpcErr.Data, &data) != nil || len(data.Elicitations) != 1 || data.Elicitations[0].Mode != "url" {
		t.Fatalf("%s's -32042 data %s", who, rpcErr.Data)
	}
	return data.Elicitations[0].URL
}

// signInWith is signInAs for a user of the test's own users file.
func signInWith(link, user, password string) error {
	b := newBrowser()
	id, err := b.open(link)
	if err != nil {
		return err
	}
	resp, err := b.c.PostForm(b.origin+"/login/username", url.Values{"username": {user}, "password": {password}, "id": {id}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "is signed in to tracker for you") {
		return fmt.Errorf("the sign-in ended with HTTP %d: %s", resp.StatusCode, body)
	}
	return nil
}
