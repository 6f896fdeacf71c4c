package team

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestTokenExchangeUpstream: a person signed in to mcpx at the real
// OpenID provider (an opaque token, introspected) calls a per-person
// upstream that trusts the same provider (it checks tokens at its
// userinfo); mcpx exchanges the person's own token for one of the
// upstream (RFC 8693) and the call proceeds as them with no browser step.
// A person the provider will not exchange for gets a tool error saying
// so, not a sign-in link (no signInFallback).
func TestTokenExchangeUpstream(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	// alice may have her tokens exchanged (the example provider asks
	// IsAdmin of a subject exchanged without an actor); bob may not.
	people := map[string]mcpxtest.OIDCUserEntry{
		"alice":   oidcPeople["alice"],
		"bob":     oidcPeople["bob"],
		"service": {ID: "service", Username: mcpxtest.OIDCUser, Password: mcpxtest.OIDCPassword, FirstName: "Service", LastName: "account"},
	}
	a := people["alice"]
	a.IsAdmin = true
	people["alice"] = a
	users, _ := json.Marshal(people)
	usersFile := e.Path("oidc-users.json")
	if err := os.WriteFile(usersFile, users, 0o600); err != nil {
		t.Fatal(err)
	}
	loginRedirect := "http://127.0.0.1:" + mcpxtest.FreePort(t) + "/callback"
	op := mcpxtest.StartOIDCEnv(t, loginRedirect+","+oidcRedirect, "USERS_FILE="+usersFile)
	var md map[string]any // the provider's issuer: mcpx discovers its token endpoint
	getJSONInto(t, op.Issuer+".well-known/openid-configuration", &md)
	up := startPersonUpstream(t, op.Issuer)
	port := mcpxtest.FreePort(t)
	base := "http://127.0.0.1:" + port
	cfg := e.Path("config.json")
	harness.WriteJSONFile(t, cfg, map[string]any{
		"mcpx": map[string]any{
			"http": map[string]any{"listen": "127.0.0.1:" + port},
			"auth": map[string]any{
				"issuers": []string{op.Issuer}, "audience": base + apitype.PathMCP, "scopes": []string{"profile"},
				"introspection": map[string]any{"url": md["introspection_endpoint"], "clientId": "web", "clientSecret": "secret"},
			},
		},
		"mcpServers": map[string]any{"secure": map[string]any{
			"url": up.URL + "/mcp",
			"oauth": map[string]any{"clientId": mcpxtest.OIDCClient, "redirectUri": loginRedirect, "accounts": "per-person",
				"tokenExchange": map[string]any{"issuer": md["issuer"], "clientId": "api", "clientSecret": "secret",
					"audience": "api", "resource": up.URL + "/mcp", "scopes": []string{"openid", "profile"}}},
		}},
	})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	harness.McpxLogin(t, e, cfg, exe, e.Path("prompts.log")) // the shared sign-in: the tool list's
	shared := harness.ReadSignIn(t, e).Token.AccessToken
	_, st := harness.StartV1Daemon(t, e, cfg)
	if st.HTTP != base+apitype.PathMCP {
		t.Fatalf("the daemon's MCP endpoint is %q, want %s", st.HTTP, base+apitype.PathMCP)
	}

	aliceTok := personToken(t, op, "alice", "openid profile")
	alice := connectAs(t, st.HTTP, aliceTok, true) // URL mode: a sign-in would be asked, not carried in an error
	got, err := harness.CallWhoami(alice)
	if err != nil {
		t.Fatalf("alice calls secure__whoami: %v, want a token by exchange and no browser step", err)
	}
	call := up.last(t)
	if got != "you are alice" || call.User != "alice" {
		t.Errorf("alice's call: %q, the upstream saw %+v, want alice", got, call)
	}
	if call.Token == aliceTok || call.Token == shared || call.Token == "" {
		t.Errorf("the upstream got token %q: want one exchanged for alice, not her mcpx token nor the shared sign-in", call.Token)
	}
	if log := harness.DaemonLogs(e); strings.Contains(log, aliceTok) {
		t.Error("the daemon's log holds alice's access token")
	}
	// Her next call uses the kept record: same token, no new exchange.
	if _, err := harness.CallWhoami(alice); err != nil {
		t.Fatal(err)
	}
	if again := up.last(t); again.Token != call.Token {
		t.Errorf("alice's second call carried %q, want the kept exchanged token %q", again.Token, call.Token)
	}

	// bob: the provider refuses to exchange his token (the example
	// provider answers 500 server_error with its reason); a clear tool
	// error with that reason, no link, and the upstream never sees a call
	// as him.
	bob := connectAs(t, st.HTTP, personToken(t, op, "bob", "openid profile"), true)
	_, err = harness.CallWhoami(bob)
	if err == nil || !strings.Contains(err.Error(), "exchanging your token") || !strings.Contains(err.Error(), "impersonation permission") || strings.Contains(err.Error(), "/oauth/start") {
		t.Errorf("bob calls secure__whoami: %v, want a tool error saying the exchange was refused", err)
	}
	if last := up.last(t); last.User == "bob" {
		t.Errorf("the upstream took a call as bob: %+v", last)
	}
	// His next call, right after, is answered with that reason without
	// asking the provider again: mcpx backs off.
	_, err = harness.CallWhoami(bob)
	if err == nil || !strings.Contains(err.Error(), "impersonation permission") || !strings.Contains(err.Error(), "mcpx asks again in") {
		t.Errorf("bob's second call: %v, want the last refusal and when mcpx asks again", err)
	}
}
