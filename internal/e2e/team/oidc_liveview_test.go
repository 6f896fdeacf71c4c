package team

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestOIDCAdminLiveView: a person of an admin group gets a live view
// link over the HTTP face (POST /v1/ui/link with their token), on the
// gateway's public URL, and opens the view through the name the load
// balancer answers for (allowedHosts); a person of another group is
// refused the link (403), the policy deciding it as for /v1's others.
func TestOIDCAdminLiveView(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	users, _ := json.Marshal(oidcPeople)
	usersFile := e.Path("oidc-users.json")
	if err := os.WriteFile(usersFile, users, 0o600); err != nil {
		t.Fatal(err)
	}
	op := mcpxtest.StartOIDCEnv(t, oidcRedirect, "USERS_FILE="+usersFile)
	port := mcpxtest.FreePort(t)
	base := "http://127.0.0.1:" + port
	public := "http://gateway.example:" + port // the load balancer's name, here this listener
	var md map[string]any
	getJSONInto(t, op.Issuer+".well-known/openid-configuration", &md)
	cfg := e.WriteConfig(map[string]any{
		"http": map[string]any{"listen": "127.0.0.1:" + port, "allowedHosts": []string{"gateway.example"}, "publicUrl": public},
		"auth": map[string]any{
			"issuers": []string{op.Issuer}, "audience": base + apitype.PathMCP, "groupsClaim": "family_name",
			"introspection": map[string]any{"url": md["introspection_endpoint"], "clientId": "web", "clientSecret": "secret"},
			"groups":        map[string]any{"alpha": map[string]any{"tools": []string{"demo__echo"}}, "ops": map[string]any{"admin": true}},
		},
	}, mcpxtest.Demo{Name: "demo"})
	harness.StartV1Daemon(t, e, cfg)

	// Every request goes to this listener, with the public name as Host.
	c := &http.Client{Timeout: harness.WaitLong}
	do := func(method, u string, header map[string]string) (int, []byte) {
		t.Helper()
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(method, base+pu.RequestURI(), nil)
		req.Host = pu.Host
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, b
	}
	link := func(user string) (int, []byte) {
		return do(http.MethodPost, public+apitype.PathV1UILink, map[string]string{"Authorization": "Bearer " + personToken(t, op, user, "openid profile")})
	}

	if code, body := link("alice"); code != http.StatusForbidden {
		t.Fatalf("alice (not an admin) asks for a live view link: %d %s, want 403", code, body)
	}
	code, body := link("carol")
	var got apitype.UILink
	if code != http.StatusOK || json.Unmarshal(body, &got) != nil || !strings.HasPrefix(got.URL, public+"/ui/#t=") {
		t.Fatalf("carol (admin) asks for a live view link: %d %s, want one on %s", code, body, public)
	}
	u, _ := url.Parse(got.URL)
	origin := map[string]string{"Origin": public}
	code, body = do(http.MethodPost, public+"/ui/session", map[string]string{"Origin": public, "Mcpx-Ui-Link": strings.TrimPrefix(u.Fragment, "t=")})
	var session struct{ Session string }
	if code != http.StatusOK || json.Unmarshal(body, &session) != nil || session.Session == "" {
		t.Fatalf("trading carol's link: %d %s", code, body)
	}
	origin["Mcpx-Ui-Session"] = session.Session
	code, body = do(http.MethodGet, public+"/ui/state", origin)
	if code != http.StatusOK || !strings.Contains(string(body), `"demo"`) {
		t.Fatalf("carol's live view state: %d %s", code, body)
	}
	// The link was for one use.
	if code, _ := do(http.MethodPost, public+"/ui/session", map[string]string{"Origin": public, "Mcpx-Ui-Link": strings.TrimPrefix(u.Fragment, "t=")}); code == http.StatusOK {
		t.Fatal("the link opened the view twice")
	}
}
