package hostserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"mcpx/internal/authn"
	"mcpx/internal/principal"
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
		v := a.decide(r)
		if v.status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, v.status, v.msg, tc.status)
		}
		for _, want := range tc.challenge {
			if !strings.Contains(v.challenge, want) {
				t.Errorf("%s: challenge %s, want it to hold %s", tc.name, v.challenge, want)
			}
		}
		if tc.status == 0 && v.who.ID() != "http" {
			t.Errorf("%s: principal %v", tc.name, v.who)
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

// TestPersonSessionGroups: a person's legacy session is theirs with the
// groups it began with; the same person with other groups (a new token
// after they left a group) finds no session, and so no policy of the
// groups they no longer have.
func TestPersonSessionGroups(t *testing.T) {
	face, stop := newFuzzHTTP()
	defer stop()
	a := principal.Person("https://idp.example.com/", "u1", "Ada", []string{"eng", "ops"})
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7777/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	face.serve(w, r, a)
	sid := w.Header().Get(headerSessionID)
	if w.Code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	if face.session(a, sid) == nil {
		t.Error("the person with the same groups finds no session")
	}
	if face.session(principal.Person("https://idp.example.com/", "u1", "Ada", []string{"eng"}), sid) != nil {
		t.Error("the person with other groups finds the session begun with the old ones")
	}
	if face.session(principal.Person("https://idp.example.com/", "u2", "Bo", []string{"eng", "ops"}), sid) != nil {
		t.Error("another person finds the session")
	}
}
