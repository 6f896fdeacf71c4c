package team

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestPerPersonUpstream: on a server whose accounts are per-person, two
// people (named tokens alice and bob) each act upstream as themselves.
// The operator's shared sign-in (mcpx login) serves the tool list alone.
// alice, whose host declares URL-mode elicitation, is asked to open her
// own sign-in link (-32042): her browser signs in at the real provider as
// test-user@localhost and comes back to the daemon's HTTP listener; her
// call then reaches the upstream with her token and her principal in the
// identity header. bob's host declares no URL mode: his tool error
// carries the link; he signs in as test-user2. The link works once, and
// only from the browser that opened it. bob cannot revoke alice's
// sign-in; alice revokes her own (her next call asks her again), the
// operator revokes bob's.
func TestPerPersonUpstream(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	port := mcpxtest.FreePort(t)
	loginRedirect := "http://127.0.0.1:" + mcpxtest.FreePort(t) + "/callback"
	base := "http://127.0.0.1:" + port
	op := mcpxtest.StartOIDC(t, loginRedirect+","+base+"/oauth/callback")
	up := startPersonUpstream(t, op.Issuer)
	cfg := e.Path("config.json")
	harness.WriteJSONFile(t, cfg, map[string]any{
		"mcpx": map[string]any{"http": map[string]any{"listen": "127.0.0.1:" + port}, "audit": map[string]any{"file": e.Path("audit.jsonl")}},
		"mcpServers": map[string]any{"secure": map[string]any{
			"url": up.URL + "/mcp",
			"oauth": map[string]any{"clientId": mcpxtest.OIDCClient, "redirectUri": loginRedirect,
				"accounts": "per-person", "identityHeader": identityHeader},
		}},
	})
	mint := func(name string) string {
		out, stderr, code := e.Run(30*time.Second, "token", "--name", name)
		if code != 0 {
			t.Fatalf("mcpx token --name %s: exit %d %s", name, code, stderr)
		}
		return strings.TrimSpace(out)
	}
	tokA, tokB := mint("alice"), mint("bob")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	harness.McpxLogin(t, e, cfg, exe, e.Path("prompts.log")) // the shared sign-in: the tool list's
	shared := harness.ReadSignIn(t, e).Token.AccessToken
	local, st := harness.StartV1Daemon(t, e, cfg)
	if st.HTTP != base+apitype.PathMCP {
		t.Fatalf("the daemon's MCP endpoint is %q, want %s", st.HTTP, base+apitype.PathMCP)
	}
	as := func(tok string) *harness.V1Client {
		c := &harness.V1Client{T: t, Http: &http.Client{}, Base: base, Token: tok}
		t.Cleanup(c.Http.CloseIdleConnections)
		return c
	}
	aliceAPI, bobAPI := as(tokA), as(tokB)

	// alice: URL elicitation, then her browser signs in.
	alice := connectAs(t, st.HTTP, tokA, true)
	link := wantURLElicitation(t, alice, "alice")
	if !strings.HasPrefix(link, base+"/oauth/start?s=") {
		t.Fatalf("alice's sign-in link %q is not on the daemon's HTTP listener", link)
	}
	if err := signInAs(link, "test-user@localhost"); err != nil {
		t.Fatalf("alice signing in: %v", err)
	}
	if text, err := harness.CallWhoami(alice); err != nil || text != "you are test-user@localhost" {
		t.Fatalf("alice's call after her sign-in: %q, %v", text, err)
	}
	ac := up.last(t)
	if ac.Token == shared || !strings.HasPrefix(ac.Identity, "http:alice#") {
		t.Fatalf("alice's call carried the shared token (%v) or identity %q", ac.Token == shared, ac.Identity)
	}
	// The link worked once.
	if code := getStatus(t, link); code != http.StatusGone && code != http.StatusNotFound {
		t.Errorf("alice's used link opened again: HTTP %d, want 410 or 404", code)
	}

	// bob: no URL mode; his tool error carries his own link.
	bob := connectAs(t, st.HTTP, tokB, false)
	blink := wantLinkInToolError(t, bob, "bob")
	if blink == link {
		t.Fatal("bob was handed alice's link")
	}
	// The redirect is taken only from the browser that opened the link:
	// another one that learnt the login step (with no cookie from the
	// start) is refused, and the sign-in waits on for bob's.
	bobs := newBrowser()
	id, err := bobs.open(blink)
	if err != nil {
		t.Fatalf("bob opening his link: %v", err)
	}
	other := newBrowser()
	other.origin = bobs.origin
	if code, body, err := other.login(id, "test-user@localhost"); err != nil || code != http.StatusForbidden || !strings.Contains(body, "does not come from the browser") {
		t.Fatalf("another browser completing bob's sign-in: %d %s %v, want 403", code, body, err)
	}
	if code, body, err := bobs.login(id, "test-user2"); err != nil || code != http.StatusOK || !strings.Contains(body, "is signed in to secure for you") {
		t.Fatalf("bob signing in: %d %s %v", code, body, err)
	}
	if text, err := harness.CallWhoami(bob); err != nil || text != "you are test-user2" {
		t.Fatalf("bob's call after his sign-in: %q, %v", text, err)
	}
	bc := up.last(t)
	if bc.Token == ac.Token || bc.Token == shared || !strings.HasPrefix(bc.Identity, "http:bob#") {
		t.Fatalf("bob's call: same token as alice %v, as the shared one %v, identity %q", bc.Token == ac.Token, bc.Token == shared, bc.Identity)
	}
	// Each acts as themself, call after call.
	for range 2 {
		if text, err := harness.CallWhoami(alice); err != nil || text != "you are test-user@localhost" || up.last(t).Token != ac.Token {
			t.Fatalf("alice again: %q, %v", text, err)
		}
		if text, err := harness.CallWhoami(bob); err != nil || text != "you are test-user2" || up.last(t).Token != bc.Token {
			t.Fatalf("bob again: %q, %v", text, err)
		}
	}

	// bob cannot revoke alice's sign-in: as for one that does not exist.
	if code, body := bobAPI.Raw(http.MethodDelete, "/v1/signins/secure?principal="+url.QueryEscape(ac.Identity), nil); code != http.StatusNotFound {
		t.Fatalf("bob revoking alice's sign-in: %d %s, want 404", code, body)
	}
	if text, err := harness.CallWhoami(alice); err != nil || text != "you are test-user@localhost" {
		t.Fatalf("alice after bob's try: %q, %v", text, err)
	}
	// alice revokes her own with mcpx logout against the gateway, as the
	// holder of her token: revoked at the provider, forgotten, and her
	// next call asks her to sign in again.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := e.Command(ctx, "logout", "-gateway", base, "secure")
	cmd.Env = append(cmd.Env, "MCPX_TOKEN="+tokA)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "signed "+ac.Identity+" out of secure: tokens revoked and deleted") {
		t.Fatalf("alice's mcpx logout -gateway: %v\n%s", err, out)
	}
	if status := harness.Userinfo(t, op.Issuer, ac.Token); status == http.StatusOK {
		t.Fatalf("the provider still takes alice's revoked token")
	}
	wantURLElicitation(t, alice, "alice after her revocation")
	if text, err := harness.CallWhoami(bob); err != nil || text != "you are test-user2" {
		t.Fatalf("bob after alice's revocation: %q, %v", text, err)
	}
	if code, body := aliceAPI.Raw(http.MethodDelete, "/v1/signins/secure", nil); code != http.StatusNotFound {
		t.Fatalf("alice revoking her sign-in again: %d %s, want 404", code, body)
	}
	// The operator, on the daemon's socket, revokes bob's.
	if out, errOut, code := e.Run(time.Minute, "logout", "--config", cfg, "-principal", bc.Identity, "secure"); code != 0 || !strings.Contains(out, "signed "+bc.Identity+" out of secure: tokens revoked") {
		t.Fatalf("the operator's mcpx logout -principal: exit %d\n%s%s", code, out, errOut)
	}
	var gone apitype.SignOut
	if code := local.Json(http.MethodDelete, "/v1/signins/secure?principal="+url.QueryEscape(bc.Identity), nil, &gone); code != http.StatusNotFound {
		t.Fatalf("the operator revoking bob's sign-in again: %d, want 404", code)
	}
	wantLinkInToolError(t, bob, "bob after the operator's revocation")

	// Each sign-in through the gateway's pages and each revocation left
	// its record, naming whom it was for and who revoked.
	e.StopDaemons()
	var callbacks, signOuts []string
	for _, r := range readAuditFile(t, e.Path("audit.jsonl")) {
		switch {
		case r.Kind == "signin" && r.Action == "GET /oauth/callback" && r.Outcome == "ok" && r.Server == "secure":
			callbacks = append(callbacks, r.Principal)
		case r.Kind == "signout" && r.Server == "secure":
			signOuts = append(signOuts, r.Principal+" "+r.Detail)
		}
	}
	if want := []string{ac.Identity, bc.Identity}; !slices.Equal(callbacks, want) {
		t.Errorf("the sign-ins' records name %q, want %q", callbacks, want)
	}
	want := []string{ac.Identity + " forgotten; revoked at the authorization server",
		"local forgotten; revoked at the authorization server; " + bc.Identity + "'s sign-in"}
	if !slices.Equal(signOuts, want) {
		t.Errorf("the revocations' records:\n%q\nwant\n%q", signOuts, want)
	}
}

// wantURLElicitation calls whoami on cs, whose host declares URL mode,
// and returns the sign-in link of the -32042 it must get.
func wantURLElicitation(t *testing.T, cs *mcp.ClientSession, who string) string {
	t.Helper()
	text, err := harness.CallWhoami(cs)
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

// wantLinkInToolError calls whoami on cs, whose host declares no URL
// mode, and returns the sign-in link its tool error must carry.
func wantLinkInToolError(t *testing.T, cs *mcp.ClientSession, who string) string {
	t.Helper()
	text, err := harness.CallWhoami(cs)
	link := signInLink.FindString(text + errString(err))
	if err == nil || link == "" {
		t.Fatalf("%s's call before signing in: %q, %v; want a tool error with the link", who, text, err)
	}
	return link
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// getStatus opens u in a fresh browser without following redirects.
func getStatus(t *testing.T, u string) int {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
