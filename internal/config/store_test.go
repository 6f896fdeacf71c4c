package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStoreSetting(t *testing.T) {
	lookup := func(k string) (string, bool) {
		if k == "PGPASS" {
			return "s3cret", true
		}
		return "", false
	}
	c, err := Parse([]byte(`{"mcpx": {"store": "postgres://mcpx:${PGPASS}@db:5432/mcpx", "jobs": {"leaseTerm": "5s"}}}`),
		testFile, &LoadOptions{Lookup: lookup})
	if err != nil {
		t.Fatal(err)
	}
	if c.Store != "postgres://mcpx:s3cret@db:5432/mcpx" || c.Jobs.LeaseTerm != 5*time.Second {
		t.Fatalf("store %q, lease %v", c.Store, c.Jobs.LeaseTerm)
	}
	if c, err := parse(`{"mcpx": {"store": ""}}`); err != nil || c.Store != "" {
		t.Fatalf("empty store: %q %v", c.Store, err)
	}
	const f = "config " + testFile + ": "
	for _, tc := range []struct{ file, want string }{
		{`{"mcpx": {"store": "mysql://u:hunter2@db/x"}}`, f + `mcpx.store: must be a PostgreSQL URL`},
		{`{"mcpx": {"store": "postgres://u:hunter2@/x"}}`, f + `mcpx.store: must be a PostgreSQL URL`},
		{`{"mcpx": {"store": 5}}`, f + `mcpx.store: must be a string`},
		{`{"mcpx": {"jobs": {"leaseTerm": "10ms"}}}`, f + `mcpx.jobs.leaseTerm: must be at least 1s`},
	} {
		_, err := parse(tc.file)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error %v, want %q (and no password)", tc.file, err, tc.want)
		}
	}
}

func TestAllowedHosts(t *testing.T) {
	c, err := parse(`{"mcpx": {"http": {"listen": "127.0.0.1:0", "allowedHosts": ["Gateway.example.com", "127.0.0.1:8443", "[::1]:9"]}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"gateway.example.com", "127.0.0.1:8443", "[::1]:9"}; !slices.Equal(c.HTTP.AllowedHosts, want) {
		t.Fatalf("allowedHosts %q, want %q", c.HTTP.AllowedHosts, want)
	}
	const f = "config " + testFile + ": "
	for _, tc := range []struct{ file, want string }{
		{`{"mcpx": {"http": {"allowedHosts": "gateway"}}}`, f + `mcpx.http.allowedHosts: must be an array`},
		{`{"mcpx": {"http": {"allowedHosts": ["https://gateway"]}}}`, f + `mcpx.http.allowedHosts[0]: must be a host name`},
		{`{"mcpx": {"http": {"allowedHosts": ["a", "gw:x"]}}}`, f + `mcpx.http.allowedHosts[1]: must be a host name`},
		{`{"mcpx": {"http": {"allowedHosts": [""]}}}`, f + `mcpx.http.allowedHosts[0]: must be a host name`},
		{`{"mcpx": {"http": {"allowedHosts": [1]}}}`, f + `mcpx.http.allowedHosts[0]: must be a string`},
	} {
		_, err := parse(tc.file)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.file, err, tc.want)
		}
	}
}

// mcpx.oauth names the sign-in key by file or environment variable, never
// holds it, and refuses what cannot be one.
func TestSignInKeySettings(t *testing.T) {
	c, err := parse(`{"mcpx": {"oauth": {"keyFile": "/etc/mcpx/signin.key", "previousKeyFiles": ["/etc/mcpx/old.key"]}}}`)
	if err != nil || c.SignInKey.File != "/etc/mcpx/signin.key" || len(c.SignInKey.PreviousFiles) != 1 || !c.SignInKey.Named() {
		t.Fatalf("%+v, %v", c.SignInKey, err)
	}
	if c, err := parse(`{"mcpx": {"oauth": {"keyEnv": "MCPX_SIGNIN_KEY"}}}`); err != nil || c.SignInKey.Env != "MCPX_SIGNIN_KEY" {
		t.Fatalf("%+v, %v", c.SignInKey, err)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"mcpx": {"oauth": {"keyFile": "signin.key"}}}`, "mcpx.oauth.keyFile: must be an absolute path"},
		{`{"mcpx": {"oauth": {"keyEnv": "c2VjcmV0IGtleQ=="}}}`, "mcpx.oauth.keyEnv: must be the name of an environment variable"},
		{`{"mcpx": {"oauth": {"keyFile": "/k", "keyEnv": "K"}}}`, "mcpx.oauth.keyEnv: name the key by keyFile or keyEnv, not both"},
		{`{"mcpx": {"oauth": {"previousKeyFiles": ["/old"]}}}`, "mcpx.oauth.previousKeyFiles: needs keyFile or keyEnv"},
		{`{"mcpx": {"oauth": {"key": "x"}}}`, "mcpx.oauth"},
	} {
		_, err := parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestPerPersonSettings(t *testing.T) {
	c, err := parse(`{"mcpx": {"http": {"publicUrl": "https://gw.example/"}}, "mcpServers": {
		"gh": {"url": "https://h/mcp", "oauth": {"accounts": "per-person", "identityHeader": "X-Mcpx-Principal"}},
		"lin": {"url": "https://l/mcp", "oauth": {"clientId": "c"}},
		"plain": {"url": "https://p/mcp"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTP.PublicURL != "https://gw.example" {
		t.Errorf("publicUrl %q, want it without its trailing slash", c.HTTP.PublicURL)
	}
	gh, lin, plain := c.Servers["gh"], c.Servers["lin"], c.Servers["plain"]
	if !gh.PerPerson() || gh.OAuth.IdentityHeader != "X-Mcpx-Principal" || lin.PerPerson() || lin.OAuth.Accounts != AccountsShared || plain.PerPerson() {
		t.Errorf("gh %+v, lin %+v, plain %+v", gh.OAuth, lin.OAuth, plain.OAuth)
	}
}
