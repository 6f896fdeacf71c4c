package team

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// The example provider's users of these tests: its profile scope gives
// their last name as the claim family_name, which the config names as the
// groups claim (the provider has no groups of its own).
var oidcPeople = map[string]mcpxtest.OIDCUserEntry{
	"alice": {ID: "alice", Username: "alice", Password: "alice-pw", FirstName: "Alice", LastName: "alpha"},
	"bob":   {ID: "bob", Username: "bob", Password: "bob-pw", FirstName: "Bob", LastName: "beta"},
	"carol": {ID: "carol", Username: "carol", Password: "carol-pw", FirstName: "Carol", LastName: "ops"},
}

// oidcRedirect is where the provider sends the code: nothing listens
// there, the test's user agent stops before it.
const oidcRedirect = "http://127.0.0.1:9/callback"

// personToken signs user in at op as a person at a browser would (the
// authorization code flow of the provider's confidential client "web")
// and returns the access token, of scope.
func personToken(t *testing.T, op *mcpxtest.OIDC, user, scope string) string {
	t.Helper()
	access, _ := personTokens(t, op, user, scope)
	return access
}

// personTokens is personToken, returning the ID token too.
func personTokens(t *testing.T, op *mcpxtest.OIDC, user, scope string) (access, id string) {
	t.Helper()
	return clientTokens(t, op, "web", user, scope)
}

// clientTokens is personTokens through the confidential client named
// client (secret "secret").
func clientTokens(t *testing.T, op *mcpxtest.OIDC, client, user, scope string) (access, id string) {
	t.Helper()
	var md struct {
		AuthorizationEndpoint string `json:"authorization_endpoint"`
		TokenEndpoint         string `json:"token_endpoint"`
	}
	getJSONInto(t, op.Issuer+".well-known/openid-configuration", &md)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 20 * time.Second, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(r.URL.String(), oidcRedirect) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	q := url.Values{"client_id": {client}, "redirect_uri": {oidcRedirect}, "response_type": {"code"}, "scope": {scope}, "state": {"s1"}}
	resp, err := c.Get(md.AuthorizationEndpoint + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	reqID := resp.Request.URL.Query().Get("authRequestID")
	if reqID == "" {
		t.Fatalf("the authorization request led to %s, not the login form", resp.Request.URL)
	}
	form := url.Values{"username": {user}, "password": {oidcPeople[user].Password}, "id": {reqID}}
	resp, err = c.PostForm(resp.Request.URL.Scheme+"://"+resp.Request.URL.Host+"/login/username", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	code := loc.Query().Get("code")
	if resp.StatusCode != http.StatusFound || code == "" {
		t.Fatalf("the sign-in of %s ended with %d at %s, no code", user, resp.StatusCode, loc)
	}
	req, _ := http.NewRequest(http.MethodPost, md.TokenEndpoint, strings.NewReader(url.Values{"grant_type": {"authorization_code"},
		"code": {code}, "redirect_uri": {oidcRedirect}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(client), "secret")
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		IDToken     string `json:"id_token"`
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("the token request of %s: %d %s", user, resp.StatusCode, b)
	}
	return tok.AccessToken, tok.IDToken
}

func getJSONInto(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v: %s", u, err, b)
	}
}

// oidcGateway is a daemon whose HTTP listener takes the people of op
// (mcpx.auth, their opaque tokens introspected as the client "web"),
// with the demo server, and a /v1 client on that listener per person.
type oidcGateway struct {
	e        *mcpxtest.Env
	base     string // http://127.0.0.1:PORT
	resource string // base + /mcp
}

func startOIDCGateway(t *testing.T, e *mcpxtest.Env, op *mcpxtest.OIDC, scopes []string) *oidcGateway {
	t.Helper()
	port := mcpxtest.FreePort(t)
	g := &oidcGateway{e: e, base: "http://127.0.0.1:" + port}
	g.resource = g.base + apitype.PathMCP
	var md map[string]any
	getJSONInto(t, op.Issuer+".well-known/openid-configuration", &md)
	cfg := e.WriteConfig(map[string]any{
		"http": map[string]any{"listen": "127.0.0.1:" + port},
		"auth": map[string]any{
			"issuers": []string{op.Issuer}, "audience": g.resource, "scopes": scopes, "groupsClaim": "family_name",
			"introspection": map[string]any{"url": md["introspection_endpoint"], "clientId": "web", "clientSecret": "secret"},
			"groups": map[string]any{
				"alpha": map[string]any{"tools": []string{"demo__echo", "demo__sleep_then"}},
				"beta":  map[string]any{"tools": []string{"demo__sleep_then"}},
				"ops":   map[string]any{"admin": true},
			},
		},
	}, mcpxtest.Demo{Name: "demo"})
	if _, st := harness.StartV1Daemon(t, e, cfg); st.HTTP != g.resource {
		t.Fatalf("the daemon serves HTTP at %q, want %q", st.HTTP, g.resource)
	}
	return g
}

func (g *oidcGateway) v1(t *testing.T, token string) *harness.V1Client {
	c := &harness.V1Client{T: t, Http: &http.Client{}, Base: g.base, Token: token}
	t.Cleanup(c.Http.CloseIdleConnections)
	return c
}

func (g *oidcGateway) mcp(t *testing.T, token string) *harness.RawHost {
	h := harness.NewRawHost(t, &harness.HTTPMCPX{URL: g.resource, Token: token, LogBuf: &harness.SyncBuffer{}})
	h.Initialize("2025-11-25")
	return h
}

// toolCall sends tools/call of name with args as h and returns the
// result, or the JSON-RPC error's message.
func toolCall(t *testing.T, h *harness.RawHost, name string, args map[string]any) (result string, errMsg string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	r := h.Do(string(b), map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	if r.Status != http.StatusOK || len(r.Msgs) == 0 {
		t.Fatalf("tools/call %s: %d %s", name, r.Status, r.Body)
	}
	last := r.Msgs[len(r.Msgs)-1]
	if last.Error != nil {
		return "", last.Error.Message
	}
	return string(last.Result), ""
}

// TestOIDCPeople: people signed in at a real OpenID provider are
// principals of their own on the HTTP face, over MCP and /v1 alike:
// their groups select their tools, one cannot read another's job (404),
// an admin group's member can; mcpx's own token keeps working; a token
// lacking the required scope is refused with 403 insufficient_scope;
// and once the provider is gone a token not yet known fails closed.
func TestOIDCPeople(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	users, _ := json.Marshal(oidcPeople)
	usersFile := e.Path("oidc-users.json")
	if err := os.WriteFile(usersFile, users, 0o600); err != nil {
		t.Fatal(err)
	}
	op := mcpxtest.StartOIDCEnv(t, oidcRedirect, "USERS_FILE="+usersFile)
	g := startOIDCGateway(t, e, op, []string{"profile"})

	// No token: 401 naming the metadata, which names the provider.
	resp, err := http.Post(g.resource, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	challenge := resp.Header.Get("WWW-Authenticate")
	wantMD := g.base + "/.well-known/oauth-protected-resource/mcp"
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`+wantMD+`"`) || !strings.Contains(challenge, `scope="profile"`) {
		t.Fatalf("no token: %d %q, want 401 naming %s and the scope", resp.StatusCode, challenge, wantMD)
	}
	var prm struct {
		Resource string   `json:"resource"`
		Servers  []string `json:"authorization_servers"`
	}
	getJSONInto(t, wantMD, &prm)
	if prm.Resource != g.resource || len(prm.Servers) != 1 || prm.Servers[0] != op.Issuer {
		t.Errorf("the protected resource metadata: %+v", prm)
	}

	alice, bob, carol := personToken(t, op, "alice", "openid profile"), personToken(t, op, "bob", "openid profile"), personToken(t, op, "carol", "openid profile")

	// Over MCP: alice may call echo, bob may not.
	am, bm := g.mcp(t, alice), g.mcp(t, bob)
	if res, msg := toolCall(t, am, "demo__echo", map[string]any{"text": "hi"}); msg != "" || !strings.Contains(res, "hi") || strings.Contains(res, `"isError":true`) {
		t.Errorf("alice calls demo__echo: %s %s", res, msg)
	}
	if res, msg := toolCall(t, bm, "demo__echo", map[string]any{"text": "hi"}); msg == "" && !strings.Contains(res, `"isError":true`) {
		t.Errorf("bob calls demo__echo: %s, want refused", res)
	}
	// Over /v1: the same; and alice's job is hers alone.
	av, bv, cv := g.v1(t, alice), g.v1(t, bob), g.v1(t, carol)
	var apiErr apitype.Error
	if code := bv.Json(http.MethodPost, apitype.PathV1Jobs, apitype.CallRequest{Tool: "demo__echo", Arguments: json.RawMessage(`{"text":"x"}`)}, &apiErr); code != http.StatusForbidden {
		t.Errorf("bob starts a job of demo__echo over /v1: %d %+v, want 403", code, apiErr)
	}
	var job apitype.Job
	if code := av.Json(http.MethodPost, apitype.PathV1Jobs, apitype.CallRequest{Tool: "demo__sleep_then", Arguments: json.RawMessage(`{"seconds":0,"text":"alice's"}`)}, &job); code != http.StatusOK || job.ID == "" {
		t.Fatalf("alice starts a job: %d %+v", code, job)
	}
	jobPath := strings.Replace(apitype.PathV1Job, "{id}", job.ID, 1)
	var got apitype.Job
	if code := av.Json(http.MethodGet, jobPath, nil, &got); code != http.StatusOK || got.ID != job.ID {
		t.Errorf("alice reads her job: %d %+v", code, got)
	}
	if code := bv.Json(http.MethodGet, jobPath, nil, &apiErr); code != http.StatusNotFound {
		t.Errorf("bob reads alice's job over /v1: %d %+v, want 404", code, apiErr)
	}
	if res, msg := toolCall(t, bm, "mcpx_job", map[string]any{"job_id": job.ID}); msg == "" && !strings.Contains(res, `"isError":true`) {
		t.Errorf("bob reads alice's job over MCP: %s, want refused", res)
	} else if strings.Contains(res+msg, "alice's") {
		t.Errorf("bob's refusal shows alice's result: %s %s", res, msg)
	}
	if code := cv.Json(http.MethodGet, jobPath, nil, &got); code != http.StatusOK || got.ID != job.ID {
		t.Errorf("carol, an admin, reads alice's job: %d %+v", code, got)
	}
	var st apitype.Status
	if code := bv.Json(http.MethodGet, apitype.PathV1Status, nil, &st); code != http.StatusOK || len(st.Jobs) != 0 {
		t.Errorf("bob's status: %d, %d jobs, want none of alice's", code, len(st.Jobs))
	}
	// mcpx's own token still opens the face.
	tok, err := os.ReadFile(e.Vars["XDG_STATE_HOME"] + "/mcpx/token")
	if err != nil {
		t.Fatal(err)
	}
	if code := g.v1(t, strings.TrimSpace(string(tok))).Json(http.MethodGet, apitype.PathV1Tools, nil, nil); code != http.StatusOK {
		t.Errorf("mcpx's default token: %d", code)
	}
	// A token without the required scope: 403 insufficient_scope.
	narrow := personToken(t, op, "alice", "openid")
	ctx, cancel := context.WithTimeout(context.Background(), harness.WaitLong)
	defer cancel()
	resp = g.v1(t, narrow).Do(ctx, http.MethodGet, apitype.PathV1Tools, nil, nil)
	resp.Body.Close()
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusForbidden || !strings.Contains(ch, `error="insufficient_scope"`) || !strings.Contains(ch, `scope="profile"`) {
		t.Errorf("a token without the scope: %d %q, want 403 insufficient_scope", resp.StatusCode, ch)
	}
	// A token the provider never issued: 401 invalid_token.
	resp = g.v1(t, "made-up-token").Do(ctx, http.MethodGet, apitype.PathV1Tools, nil, nil)
	resp.Body.Close()
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(ch, `error="invalid_token"`) {
		t.Errorf("a made-up token: %d %q, want 401 invalid_token", resp.StatusCode, ch)
	}
	// The provider's ID token is a JWT it signed, but for its client, not
	// for mcpx: refused for its audience, which is checked after its
	// issuer's metadata and keys were fetched and its signature verified;
	// the same token with another signature is refused for that.
	_, idTok := personTokens(t, op, "bob", "openid profile")
	if strings.Count(idTok, ".") != 2 {
		t.Fatalf("the provider's ID token is no JWT: %q", idTok)
	}
	parts := strings.Split(idTok, ".")
	forged := parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2]))
	for _, tc := range []struct{ name, tok, why string }{{"an ID token", idTok, "audience"}, {"a forged signature", forged, "signature"}} {
		resp = g.v1(t, tc.tok).Do(ctx, http.MethodGet, apitype.PathV1Tools, nil, nil)
		resp.Body.Close()
		if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(ch, `error="invalid_token"`) || !strings.Contains(ch, tc.why) {
			t.Errorf("%s: %d %q, want 401 invalid_token for its %s", tc.name, resp.StatusCode, ch, tc.why)
		}
	}
	// The provider goes away: a token mcpx has not seen cannot be
	// checked, and is refused with 503 (fail closed), and said in the log.
	op.Stop()
	resp = g.v1(t, "another-token").Do(ctx, http.MethodGet, apitype.PathV1Tools, nil, nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("the introspection endpoint down: %d, want 503", resp.StatusCode)
	}
	if log := harness.DaemonLogs(e); !strings.Contains(log, "cannot reach the introspection endpoint") {
		t.Errorf("the daemon's log does not say the introspection endpoint is down:\n%s", log)
	}
}
