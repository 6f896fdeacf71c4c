package team

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestOIDCJWTAccessToken: a person signs in at the real provider through
// a client whose access tokens are JWTs, audience mcpx's resource URL;
// mcpx, which has no introspection configured, checks the JWT against the
// provider's JWKS (discovered from its issuer) and serves the person's
// call. A JWT of the same provider for another resource is refused with
// 401 and the challenge the spec asks for.
func TestOIDCJWTAccessToken(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	users, _ := json.Marshal(oidcPeople)
	usersFile := e.Path("oidc-users.json")
	if err := os.WriteFile(usersFile, users, 0o600); err != nil {
		t.Fatal(err)
	}
	port := mcpxtest.FreePort(t)
	base := "http://127.0.0.1:" + port
	resource, elsewhere := base+apitype.PathMCP, "https://elsewhere.example/mcp"
	op := mcpxtest.StartOIDCJWT(t, oidcRedirect, []string{resource, elsewhere}, "USERS_FILE="+usersFile)
	cfg := e.WriteConfig(map[string]any{
		"http": map[string]any{"listen": "127.0.0.1:" + port},
		"auth": map[string]any{"issuers": []string{op.Issuer}, "audience": resource},
	}, mcpxtest.Demo{Name: "demo"})
	if _, st := harness.StartV1Daemon(t, e, cfg); st.HTTP != resource {
		t.Fatalf("the daemon serves HTTP at %q, want %q", st.HTTP, resource)
	}

	tok, _ := clientTokens(t, op, resource, "alice", "openid profile")
	claims := jwtClaims(t, tok)
	if claims["iss"] != op.Issuer || !audHas(claims["aud"], resource) || claims["sub"] != "alice" {
		t.Fatalf("the provider's access token is not the JWT wanted: %v", claims)
	}
	g := &oidcGateway{e: e, base: base, resource: resource}
	if got, msg := toolCall(t, g.mcp(t, tok), "demo__echo", map[string]any{"text": "hi"}); msg != "" || !strings.Contains(got, "hi") {
		t.Fatalf("alice's call with her JWT: %q, error %q", got, msg)
	}

	// The same provider's JWT for another resource: 401, invalid_token,
	// naming mcpx's metadata.
	other, _ := clientTokens(t, op, elsewhere, "alice", "openid profile")
	if c := jwtClaims(t, other); !audHas(c["aud"], elsewhere) || audHas(c["aud"], resource) {
		t.Fatalf("the other resource's JWT: %v", c)
	}
	req, _ := http.NewRequest(http.MethodPost, resource, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Authorization", "Bearer "+other)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ch := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(ch, "Bearer ") || !strings.Contains(ch, `error="invalid_token"`) ||
		!strings.Contains(ch, `resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("a JWT for another resource: %d, WWW-Authenticate %q; want 401, invalid_token and the resource metadata", resp.StatusCode, ch)
	}
}

// jwtClaims decodes a JWT's claims, unchecked.
func jwtClaims(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	var c map[string]any
	if err != nil || json.Unmarshal(b, &c) != nil {
		t.Fatalf("not a JWT's claims: %v %s", err, b)
	}
	return c
}

// audHas reports whether a JWT's aud (a string or a list) names want.
func audHas(aud any, want string) bool {
	switch a := aud.(type) {
	case string:
		return a == want
	case []any:
		return slices.ContainsFunc(a, func(v any) bool { return v == want })
	}
	return false
}
