package e2e

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/mcpxtest"
)

// TestPrincipalsServerErrors: a server that cannot be listed is named in
// /v1/tools' errors to a principal without a tool filter, and not to one
// whose filter keeps it from that server.
func TestPrincipalsServerErrors(t *testing.T) {
	t.Parallel()
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(map[string]any{
		"http":  map[string]any{"listen": "127.0.0.1:0"},
		"hosts": map[string]any{"alice": map[string]any{"tools": []string{"demo__*"}}},
	}, mcpxtest.Demo{Name: "demo"}, mcpxtest.Demo{Name: "hidden", Fields: map[string]any{"command": "/nonexistent/server", "args": []string{}}})
	mint := func(name string) string {
		out, stderr, code := e.Run(30*time.Second, "token", "--name", name)
		if code != 0 {
			t.Fatalf("mcpx token --name %s: exit %d %s", name, code, stderr)
		}
		return strings.TrimSpace(out)
	}
	tokA, tokB := mint("alice"), mint("bob")
	local, st := startV1Daemon(t, e, cfg)
	if _, err := os.Stat(st.TokenFile); err != nil || st.HTTP == "" {
		t.Fatalf("the daemon has no HTTP listener: %+v", st)
	}
	base := strings.TrimSuffix(st.HTTP, apitype.PathMCP)
	as := func(tok string) *v1Client {
		c := &v1Client{t: t, http: &http.Client{}, base: base, token: tok}
		t.Cleanup(c.http.CloseIdleConnections)
		return c
	}
	for _, tc := range []struct {
		who   string
		c     *v1Client
		named bool
	}{{"the local user", local, true}, {"bob", as(tokB), true}, {"alice", as(tokA), false}} {
		var tools apitype.Tools
		if code := tc.c.json(http.MethodGet, apitype.PathV1Tools, nil, &tools); code != http.StatusOK {
			t.Fatalf("%s's /v1/tools: %d", tc.who, code)
		}
		if _, named := tools.Errors["hidden"]; named != tc.named {
			t.Errorf("%s's /v1/tools errors %v: names the hidden server %v, want %v", tc.who, tools.Errors, named, tc.named)
		}
	}
}
