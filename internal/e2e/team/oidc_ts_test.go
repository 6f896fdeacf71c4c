package team

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestOIDCTypeScriptHost: the TypeScript SDK's OAuth client signs a
// person in to mcpx as a host does: refused with 401, it follows mcpx's
// protected resource metadata to the real provider, runs the
// authorization code flow with PKCE and the resource indicator (the
// browser step driven over HTTP), and, with the access token, calls a
// tool the person's group allows.
func TestOIDCTypeScriptHost(t *testing.T) {
	node, interop := mcpxtest.Node(t)
	e := mcpxtest.NewEnv(t)
	users, _ := json.Marshal(oidcPeople)
	usersFile := e.Path("oidc-users.json")
	if err := os.WriteFile(usersFile, users, 0o600); err != nil {
		t.Fatal(err)
	}
	op := mcpxtest.StartOIDCEnv(t, oidcRedirect, "USERS_FILE="+usersFile)
	g := startOIDCGateway(t, e, op, []string{"openid", "profile"})
	spec, _ := json.Marshal(map[string]any{"url": g.resource, "redirectUrl": oidcRedirect, "clientId": "web", "clientSecret": "secret",
		"scope": "openid profile", "user": "alice", "password": oidcPeople["alice"].Password,
		"tool": "demo__echo", "args": map[string]any{"text": "signed in"}, "deadlineMs": 60000})
	ctx, cancel := context.WithTimeout(context.Background(), 2*harness.WaitLong)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(interop, "oauthhost.mjs"), string(spec))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var rep struct {
		OK           bool   `json:"ok"`
		RefusedFirst bool   `json:"refusedFirst"`
		AuthURL      string `json:"authUrl"`
		Resource     string `json:"resource"`
		Error        string `json:"error"`
		Result       struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if jerr := json.Unmarshal(out, &rep); jerr != nil || err != nil || !rep.OK {
		t.Fatalf("oauthhost.mjs: %v %v\nreport: %s\nstderr: %s", err, jerr, out, stderr.String())
	}
	if !rep.RefusedFirst || !strings.HasPrefix(rep.AuthURL, strings.TrimSuffix(op.Issuer, "/")) || rep.Resource != g.resource {
		t.Errorf("the SDK's authorization: refused first %v, URL %s, resource %q; want mcpx's refusal to lead to %s with resource %s",
			rep.RefusedFirst, rep.AuthURL, rep.Resource, op.Issuer, g.resource)
	}
	if rep.Result.IsError || len(rep.Result.Content) == 0 || !strings.Contains(rep.Result.Content[0].Text, "signed in") {
		t.Errorf("alice's call through the SDK: %+v", rep.Result)
	}
}
