package team

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store/storetest"
)

// The guide's people: alice in developers, bob in support (their last
// name, which the test names as the groups claim: the example provider
// has no groups), and the service account the shared sign-in of the
// tool list uses (the user the harness's headless browser signs in as).
var guidePeople = map[string]mcpxtest.OIDCUserEntry{
	"alice": {ID: "alice", Username: "alice", Password: oidcPeople["alice"].Password, FirstName: "Alice", LastName: "developers"},
	"bob":   {ID: "bob", Username: "bob", Password: oidcPeople["bob"].Password, FirstName: "Bob", LastName: "support"},
	"svc":   {ID: "svc", Username: mcpxtest.OIDCUser, Password: mcpxtest.OIDCPassword, FirstName: "Service", LastName: "none"},
}

// TestTeamGuide follows docs/team.md: its config file, unit and nginx
// block, with the example names swapped for loopback ones, run as two
// daemons on one PostgreSQL behind nginx, with the real OpenID provider
// and a tracker that needs OAuth at it; then what the guide says a team
// gets, and the audit log holding exactly the lines of it.
func TestTeamGuide(t *testing.T) {
	pg := storetest.PostgresURL(t)
	lbPort := mcpxtest.FreePort(t)
	lb := "127.0.0.1:" + lbPort
	public := "http://" + lb
	loginRedirect := "http://127.0.0.1:" + mcpxtest.FreePort(t) + "/callback"

	envs := []*mcpxtest.Env{mcpxtest.NewEnv(t), mcpxtest.NewEnv(t)}
	users, _ := json.Marshal(guidePeople)
	usersFile := envs[0].Path("oidc-users.json")
	if err := os.WriteFile(usersFile, users, 0o600); err != nil {
		t.Fatal(err)
	}
	op := mcpxtest.StartOIDCEnv(t, strings.Join([]string{oidcRedirect, loginRedirect, public + "/oauth/callback"}, ","), "USERS_FILE="+usersFile)
	var md struct {
		Introspection string `json:"introspection_endpoint"`
	}
	getJSONInto(t, op.Issuer+".well-known/openid-configuration", &md)
	tracker := startTracker(t, op.Issuer)
	key := harness.WriteKey(t, t.TempDir(), "signin.key")

	// Step 2 and 3: the config file, the key, the environment file.
	var cfgs, addrs []string
	for i, e := range envs {
		addr := "127.0.0.1:" + mcpxtest.FreePort(t)
		text := swap(t, "config.json", guideBlock(t, "config.json"), [][2]string{
			{"https://tracker.example.com/mcp", tracker.URL + "/mcp"},
			{`"clientId": "mcpx-tracker"`, fmt.Sprintf(`"clientId": %q, "redirectUri": %q`, mcpxtest.OIDCClient, loginRedirect)},
			{"0.0.0.0:7001", addr},
			{`"mcpx.example.com"`, fmt.Sprintf("%q", lb)},
			{"https://mcpx.example.com", public},
			{"/etc/mcpx/signin.key", key},
			{"/var/log/mcpx/audit.jsonl", e.Path("audit.jsonl")},
			{"https://idp.example.com/realms/eng/protocol/openid-connect/token/introspect", md.Introspection},
			{"https://idp.example.com/realms/eng", op.Issuer},
			{`"clientId": "mcpx"`, `"clientId": "web"`},
			{`"scopes": ["mcpx"]`, `"scopes": ["profile"]`},
			{`"groupsClaim": "groups"`, `"groupsClaim": "family_name"`},
		})
		cfg := e.Path("config.json")
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		e.Vars["MCPX_STORE"] = pg
		e.Vars["MCPX_INTROSPECTION_SECRET"] = "secret"
		cfgs, addrs = append(cfgs, cfg), append(addrs, addr)
		if i == 0 { // the service account's shared sign-in, for the tool list
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			mcpxLogin(t, e, cfg, exe, "tracker")
		}
	}
	// Step 4 and 5: the replicas, nginx.
	for i, e := range envs {
		guideDaemon(t, e, cfgs[i], addrs[i], lb)
	}
	guideNginx(t, lbPort, addrs)
	endpoint := public + apitype.PathMCP

	teamGuideFlow(t, op, tracker, envs, cfgs, endpoint, addrs)
}
