package mcpxtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// OIDC is a real OAuth 2.0 / OpenID Connect authorization server for
// tests: the example OpenID provider of github.com/zitadel/oidc (pinned
// in test/tools/go.mod, built on first use), run as a process of its own
// with its in-memory users and clients. Its public client "native"
// (token endpoint auth none, PKCE) may redirect to the redirect URI given
// to StartOIDC.
type OIDC struct {
	// Issuer is the server's issuer identifier, http://localhost:PORT/.
	Issuer string
	// Stop stops the server before the test ends (an identity provider
	// that goes away); it waits for it.
	Stop func()
}

// OIDCUser and OIDCPassword sign in at the example provider's login form.
const (
	OIDCUser     = "test-user2"
	OIDCPassword = "verysecure"
	OIDCClient   = "native"
)

// oidcTool is the example OpenID provider of github.com/zitadel/oidc.
var oidcTool = &toolBinary{pkg: "github.com/zitadel/oidc/v3/example/server", name: "oidc-server", what: "the example OpenID provider"}

// StartOIDC starts the provider on a free port, its client "native"
// allowed to redirect to redirectURI; it stops with the test.
func StartOIDC(t testing.TB, redirectURI string) *OIDC {
	t.Helper()
	return StartOIDCEnv(t, redirectURI)
}

// OIDCUserEntry is a user of a users file (StartOIDCEnv's USERS_FILE=),
// as the example provider reads it: its ID is the subject of its tokens;
// its LastName is the claim family_name of the profile scope; IsAdmin
// lets the provider exchange the user's tokens (RFC 8693 token exchange
// without an actor: the example provider calls it impersonation).
type OIDCUserEntry struct {
	ID, Username, Password, FirstName, LastName, Email string
	IsAdmin                                            bool `json:",omitempty"`
}

// StartOIDCEnv is StartOIDC with more of the example provider's
// environment (USERS_FILE=PATH: its users, a JSON object of
// OIDCUserEntry by ID, in place of the built-in ones).
func StartOIDCEnv(t testing.TB, redirectURI string, env ...string) *OIDC {
	t.Helper()
	return startOIDC(t, oidcTool, redirectURI, env...)
}

// oidcJWTTool is the example provider with clients of JWT access tokens
// (test/tools/oidcjwt).
var oidcJWTTool = &toolBinary{pkg: "mcpx/test/tools/oidcjwt", name: "oidc-jwt-server", what: "the example OpenID provider with JWT clients"}

// StartOIDCJWT is StartOIDCEnv with, beside the example's clients,
// confidential clients named jwtClients (secret "secret") whose access
// tokens are JWTs signed with the provider's key, their audience the
// client's id.
func StartOIDCJWT(t testing.TB, redirectURI string, jwtClients []string, env ...string) *OIDC {
	t.Helper()
	return startOIDC(t, oidcJWTTool, redirectURI, append(env, "JWT_CLIENTS="+strings.Join(jwtClients, ","))...)
}

func startOIDC(t testing.TB, tool *toolBinary, redirectURI string, env ...string) *OIDC {
	t.Helper()
	bin := tool.path(t)
	port := FreePort(t)
	if u, err := url.Parse(redirectURI); err == nil {
		for port == u.Port() { // the redirect's port, free too a moment ago
			port = FreePort(t)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(append(os.Environ(), "PORT="+port, "REDIRECT_URI="+redirectURI), env...)
	logs, err := os.CreateTemp(t.TempDir(), "oidc-*.log")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	defer logs.Close() // the child has its own descriptor
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); _ = cmd.Wait() }) }
	t.Cleanup(stop)
	o := &OIDC{Issuer: "http://localhost:" + port + "/", Stop: stop}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(o.Issuer + ".well-known/openid-configuration")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return o
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logs.Name())
			t.Fatalf("the OpenID provider did not answer within 30s: %v\n%s", err, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}
