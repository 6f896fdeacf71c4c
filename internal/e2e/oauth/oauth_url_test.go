package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestOAuthSignInByURLElicitation: a host that declares URL-mode
// elicitation, calling a server nobody has signed in to, is asked to open
// the sign-in URL of a flow mcpx runs (its redirect comes back to mcpx),
// instead of being told to run mcpx login. A 2025-11-25 go-sdk host gets
// -32042 with the URL, has the user sign in, and calls again; a
// 2026-07-28 go-sdk host gets input_required, which go-sdk hands its
// elicitation handler (where the user signs in) and retries by itself.
func TestOAuthSignInByURLElicitation(t *testing.T) {
	for _, hostVersion := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(hostVersion+"-host", func(t *testing.T) {
			mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
				e := mcpxtest.NewEnv(t)
				redirect := "http://127.0.0.1:" + mcpxtest.FreePort(t) + "/callback"
				op := mcpxtest.StartOIDC(t, redirect)
				ps := harness.StartProtected(t, op.Issuer)
				cfg := e.Path("config.json")
				harness.WriteJSONFile(t, cfg, map[string]any{"mcpServers": map[string]any{"secure": map[string]any{
					"url": ps.URL + "/mcp", "oauth": map[string]any{"clientId": mcpxtest.OIDCClient, "redirectUri": redirect},
				}}})

				var mu sync.Mutex
				var asked []string
				client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-e2e-oauth-url", Version: "1"}, &mcp.ClientOptions{
					Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						mu.Lock()
						asked = append(asked, req.Params.URL)
						mu.Unlock()
						if err := harness.SignInAsUser(req.Params.URL); err != nil {
							return nil, err
						}
						return &mcp.ElicitResult{Action: "accept"}, nil
					},
				})
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				cmd := harness.ServeCommand(e, mode, cfg)
				stderr := &harness.GosdkStderr{}
				cmd.Stderr = stderr
				defer func() {
					if t.Failed() {
						t.Logf("mcpx serve stderr:\n%s", stderr)
					}
				}()
				cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second},
					&mcp.ClientSessionOptions{ProtocolVersion: hostVersion})
				if err != nil {
					t.Fatalf("connecting: %v", err)
				}
				defer cs.Close()

				text, err := harness.CallWhoami(cs)
				if hostVersion == "2025-11-25" {
					var rpcErr *jsonrpc.Error
					if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeURLElicitationRequired {
						t.Fatalf("the first call: %q, %v; want -32042", text, err)
					}
					var data struct{ Elicitations []mcp.ElicitParams }
					if json.Unmarshal(rpcErr.Data, &data) != nil || len(data.Elicitations) != 1 || data.Elicitations[0].Mode != "url" ||
						!isSignInStart(data.Elicitations[0].URL) {
						t.Fatalf("the -32042's data %s", rpcErr.Data)
					}
					if err := harness.SignInAsUser(data.Elicitations[0].URL); err != nil {
						t.Fatalf("signing in at the URL: %v", err)
					}
					text, err = harness.CallWhoami(cs)
				}
				if err != nil || text != "you are "+mcpxtest.OIDCUser {
					t.Fatalf("the call after the sign-in: %q, %v", text, err)
				}
				mu.Lock()
				defer mu.Unlock()
				if hostVersion == "2026-07-28" && (len(asked) != 1 || !isSignInStart(asked[0])) {
					t.Fatalf("the host was asked to open %q, want the sign-in's start once", asked)
				}
				if rec := harness.ReadSignIn(t, e); rec.Token.AccessToken == "" {
					t.Fatal("the sign-in was not stored")
				}
			})
		})
	}
}

// isSignInStart reports whether u is a sign-in's start: a page of mcpx's
// loopback listener that leads the browser on to the authorization
// server, and binds the redirect back to that browser.
func isSignInStart(u string) bool {
	return strings.HasPrefix(u, "http://127.0.0.1:") && strings.Contains(u, "/mcpx-sign-in?k=")
}
