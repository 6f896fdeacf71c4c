package team

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store/storetest"
)

// TestPerPersonReplicas: two `mcpx serve --http` replicas on one
// PostgreSQL share a person's upstream sign-in. alice, calling through
// replica 0, is handed a link on the public URL (here replica 1's
// address, as a load balancer would send her browser anywhere): the
// pending sign-in made on replica 0 is completed on replica 1, and her
// calls through either replica then carry her own token, sealed in the
// store, with no second sign-in.
func TestPerPersonReplicas(t *testing.T) {
	pg := storetest.PostgresURL(t)
	port := mcpxtest.FreePort(t)
	public := "http://127.0.0.1:" + port
	loginRedirect := "http://127.0.0.1:" + mcpxtest.FreePort(t) + "/callback"
	op := mcpxtest.StartOIDC(t, loginRedirect+","+public+"/oauth/callback")
	up := startPersonUpstream(t, op.Issuer)
	keyFile := harness.WriteKey(t, t.TempDir(), "signin.key")
	doc := map[string]any{
		"mcpx": map[string]any{"store": pg, "oauth": map[string]any{"keyFile": keyFile}, "http": map[string]any{"publicUrl": public}},
		"mcpServers": map[string]any{"secure": map[string]any{
			"url":   up.URL + "/mcp",
			"oauth": map[string]any{"clientId": mcpxtest.OIDCClient, "redirectUri": loginRedirect, "accounts": "per-person"},
		}},
	}
	var urls, cfgs []string
	var envs []*mcpxtest.Env
	for range 2 {
		e := mcpxtest.NewEnv(t)
		cfg := e.Path("config.json")
		harness.WriteJSONFile(t, cfg, doc)
		envs, cfgs = append(envs, e), append(cfgs, cfg)
	}
	out, stderr, code := envs[0].Run(30*time.Second, "token", "--name", "alice", "--config", cfgs[0])
	if code != 0 {
		t.Fatalf("mcpx token --name alice: exit %d %s", code, stderr)
	}
	alice := strings.TrimSpace(out)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	harness.McpxLogin(t, envs[0], cfgs[0], exe, envs[0].Path("prompts.log")) // the shared sign-in, for the tool list
	for i, e := range envs {
		var extra []string
		if i == 1 {
			extra = []string{"--http", "127.0.0.1:" + port}
		}
		r := harness.StartServeHTTP(t, e, cfgs[i], nil, extra...)
		urls = append(urls, r.URL)
		if _, err := config.Token(filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "token")); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.HasPrefix(urls[1], public) {
		t.Fatalf("replica 1 serves at %s, not %s", urls[1], public)
	}
	on0 := connectAs(t, urls[0], alice, true)
	link := wantURLElicitation(t, on0, "alice on replica 0")
	if !strings.HasPrefix(link, public+"/oauth/start?s=") {
		t.Fatalf("the link %q is not on the public URL", link)
	}
	if err := signInAs(link, "test-user@localhost"); err != nil {
		t.Fatalf("alice signing in through replica 1: %v", err)
	}
	var tokens []string
	for i, u := range []string{urls[1], urls[0]} {
		cs := connectAs(t, u, alice, true)
		if text, err := harness.CallWhoami(cs); err != nil || text != "you are test-user@localhost" {
			t.Fatalf("alice's call through %s: %q, %v", u, text, err)
		}
		tokens = append(tokens, up.last(t).Token)
		t.Logf("call %d through %s carried alice's token", i, u)
	}
	if text, err := harness.CallWhoami(on0); err != nil || text != "you are test-user@localhost" {
		t.Fatalf("alice's first host, on replica 0, after the sign-in: %q, %v", text, err)
	}
	if tokens[0] != tokens[1] || up.last(t).Token != tokens[0] {
		t.Fatal("the replicas sent alice's calls with different tokens")
	}
}
