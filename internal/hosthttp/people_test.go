package hosthttp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"mcpx/internal/authn"
)

// TestPeopleChallenges: with people configured, a request without a
// token, or with one that opens nothing, is refused with a challenge
// that names the protected resource metadata and the scopes; mcpx's own
// tokens still open the face.
func TestPeopleChallenges(t *testing.T) {
	const resource = "https://mcpx.example.com/mcp"
	// An issuer that cannot be reached: a JWT of it cannot be checked.
	p := &People{Verifier: authn.New(authn.Options{Issuers: []string{"http://127.0.0.1:1"}, Audience: resource, Scopes: []string{"mcpx"}}),
		Resource: resource, Servers: []string{"http://127.0.0.1:1"}, Scopes: []string{"mcpx"}}
	a := Access{Addr: "127.0.0.1:7777", Tokens: testTokens{"s3cret-token-value": ""}, People: p}
	jwt := "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwOi8vMTI3LjAuMC4xOjEifQ.c2ln"
	for _, tc := range []struct {
		name, auth string
		status     int
		challenge  []string
	}{
		{"no token", "", 401, []string{`resource_metadata="https://mcpx.example.com/.well-known/oauth-protected-resource/mcp"`, `scope="mcpx"`}},
		{"an opaque token, no introspection", "Bearer nothing-here", 401, []string{`error="invalid_token"`, "resource_metadata="}},
		{"a JWT of an issuer out of reach", "Bearer " + jwt, 503, nil},
		{"mcpx's token", "Bearer s3cret-token-value", 0, nil},
	} {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7777/mcp", nil)
		if tc.auth != "" {
			r.Header.Set("Authorization", tc.auth)
		}
		v := a.Decide(r)
		if v.Status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, v.Status, v.Msg, tc.status)
		}
		for _, want := range tc.challenge {
			if !strings.Contains(v.Challenge, want) {
				t.Errorf("%s: challenge %s, want it to hold %s", tc.name, v.Challenge, want)
			}
		}
		if tc.status == 0 && v.Who.ID() != "http" {
			t.Errorf("%s: principal %v", tc.name, v.Who)
		}
	}
	if got := p.MetadataPaths(); len(got) != 2 || got[1] != "/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("metadata paths %q", got)
	}
	rec := httptest.NewRecorder()
	p.Metadata(a).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7777/.well-known/oauth-protected-resource/mcp", nil))
	var md map[string]any
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &md) != nil || md["resource"] != resource || len(md["authorization_servers"].([]any)) != 1 {
		t.Errorf("metadata: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	p.Metadata(a).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://evil.example.com:7777/.well-known/oauth-protected-resource", nil))
	if rec.Code != 403 {
		t.Errorf("metadata for a foreign Host: %d", rec.Code)
	}
}
