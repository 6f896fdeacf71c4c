package principals

import (
	"net/http"
	"testing"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestPrincipalsServerErrors: a server that cannot be listed is named in
// /v1/tools' errors to a principal without a tool filter, and not to one
// whose filter keeps it from that server.
func TestPrincipalsServerErrors(t *testing.T) {
	t.Parallel()
	p := startPrincipalsWith(t, mcpxtest.Demo{Name: "hidden", Fields: map[string]any{"command": "/nonexistent/server", "args": []string{}}})
	for _, tc := range []struct {
		who   string
		c     *harness.V1Client
		named bool
	}{{"the local user", p.local, true}, {"bob", p.bob, true}, {"alice", p.alice, false}} {
		var tools apitype.Tools
		if code := tc.c.Json(http.MethodGet, apitype.PathV1Tools, nil, &tools); code != http.StatusOK {
			t.Fatalf("%s's /v1/tools: %d", tc.who, code)
		}
		if _, named := tools.Errors["hidden"]; named != tc.named {
			t.Errorf("%s's /v1/tools errors %v: names the hidden server %v, want %v", tc.who, tools.Errors, named, tc.named)
		}
	}
}
