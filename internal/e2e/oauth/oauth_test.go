package oauth

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

func TestOAuthSignIn(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		redirect := "http://127.0.0.1:" + mcpxtest.FreePort(t) + "/callback"
		op := mcpxtest.StartOIDC(t, redirect)
		ps := harness.StartProtected(t, op.Issuer)
		cfg := e.Path("config.json")
		harness.WriteJSONFile(t, cfg, map[string]any{"mcpServers": map[string]any{"secure": map[string]any{
			"url": ps.URL + "/mcp", "oauth": map[string]any{"clientId": mcpxtest.OIDCClient, "redirectUri": redirect},
		}}})

		// Before any sign-in, a call says what to do.
		cs := harness.ConnectGoSDK(t, e, mode, cfg, "2025-11-25", harness.NewProgressLog())
		_, err := harness.CallWhoami(cs)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != -31006 || !strings.Contains(rpcErr.Message, "run `mcpx login secure`") {
			t.Fatalf("a call before the sign-in: %v, want -31006 saying to run mcpx login", err)
		}

		prompts := e.Path("prompts.log")
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		out := harness.McpxLogin(t, e, cfg, exe, prompts)
		if !strings.Contains(out, "signed in to secure") {
			t.Fatalf("mcpx login printed %q", out)
		}
		rec := harness.ReadSignIn(t, e)
		if rec.Token.RefreshToken == "" || rec.Client.ClientID != mcpxtest.OIDCClient {
			t.Fatalf("the stored sign-in: client %q, refresh token present %v", rec.Client.ClientID, rec.Token.RefreshToken != "")
		}
		if fi, err := os.Stat(harness.SignInPath(e)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("the sign-in file: %v, mode %v; want 0600", err, fi.Mode())
		}

		// The same host's next call uses the sign-in.
		if text, err := harness.CallWhoami(cs); err != nil || text != "you are "+mcpxtest.OIDCUser {
			t.Fatalf("a call after the sign-in: %q, %v", text, err)
		}

		// Mid-session, the server refuses the access token as expired:
		// mcpx refreshes it at the provider and retries.
		first := rec.Token.AccessToken
		ps.Expire(first)
		if text, err := harness.CallWhoami(cs); err != nil || text != "you are "+mcpxtest.OIDCUser {
			t.Fatalf("a call with the token refused as expired: %q, %v", text, err)
		}
		second := harness.ReadSignIn(t, e).Token.AccessToken
		if second == first {
			t.Fatal("the refused token was not refreshed")
		}
		// The token nearing its expiry: mcpx refreshes it before the call.
		setExpiry(t, e, time.Now().Add(10*time.Second))
		if text, err := harness.CallWhoami(cs); err != nil || text != "you are "+mcpxtest.OIDCUser {
			t.Fatalf("a call with the token about to expire: %q, %v", text, err)
		}
		third := harness.ReadSignIn(t, e).Token.AccessToken
		if third == second || ps.LastSeen() != third {
			t.Fatal("the token about to expire was not refreshed before the call")
		}

		// A second host uses the sign-in without a prompt.
		cs2 := harness.ConnectGoSDK(t, e, mode, cfg, "2026-07-28", harness.NewProgressLog())
		if text, err := harness.CallWhoami(cs2); err != nil || text != "you are "+mcpxtest.OIDCUser {
			t.Fatalf("the second host's call: %q, %v", text, err)
		}
		if n := harness.CountLines(t, prompts); n != 1 {
			t.Fatalf("the user was prompted %d times, want once", n)
		}

		// Logout revokes the tokens at the provider and deletes them.
		stdout, stderr, code := e.Run(30*time.Second, "logout", "--config", cfg, "secure")
		if code != 0 || !strings.Contains(stdout, "tokens revoked and deleted") {
			t.Fatalf("mcpx logout: exit %d\n%s%s", code, stdout, stderr)
		}
		if status := harness.Userinfo(t, op.Issuer, third); status == http.StatusOK {
			t.Fatalf("the provider answers userinfo with the revoked token: HTTP %d", status)
		}
		ps.Mu.Lock()
		t.Logf("%s: signed in once; the server accepted %d requests with 3 access tokens in turn; logout revoked the last", mode, len(ps.Seen))
		ps.Mu.Unlock()
		ps.Expire(third) // the server has seen it: it would still let it in otherwise
		_, err = harness.CallWhoami(cs)
		if !errors.As(err, &rpcErr) || rpcErr.Code != -31006 {
			t.Fatalf("a call after logout: %v, want -31006", err)
		}
	})
}

// setExpiry rewrites the stored token's expiry, as time passing would.
func setExpiry(t *testing.T, e *mcpxtest.Env, at time.Time) {
	t.Helper()
	var doc map[string]any
	b, err := os.ReadFile(harness.SignInPath(e))
	if err != nil || json.Unmarshal(b, &doc) != nil {
		t.Fatalf("reading the sign-in: %v", err)
	}
	tok := doc["token"].(map[string]any)
	tok["expiry"] = at.Format(time.RFC3339Nano)
	tok["obtained"] = at.Add(-time.Hour).Format(time.RFC3339Nano) // an hour's token
	harness.WriteJSONFile(t, harness.SignInPath(e), doc)
}
