package replicas

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/config"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/oauth"
	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// TestOAuthReplicas: two `mcpx serve --http` replicas share one
// PostgreSQL store and no state directory; the sign-in is kept in the
// store, sealed with a key from a file. The provider is the real OpenID
// provider of TestOAuthSignIn. `mcpx login` with one replica's config
// signs in both; the token the server refuses is refreshed once when
// both replicas race for it (3 rounds); a token nearing its expiry is
// refreshed in the background, with no call; a refresh token revoked at
// the provider shows as revoked in `mcpx status` and calls say to sign in
// again; a login with the other replica's config restores both. A wrong
// key and a missing one each have their message.
func TestOAuthReplicas(t *testing.T) {
	pg := storetest.PostgresURL(t)
	redirect := "http://127.0.0.1:" + mcpxtest.FreePort(t) + "/callback"
	op := mcpxtest.StartOIDC(t, redirect)
	ps := harness.StartProtected(t, op.Issuer)
	keyDir := t.TempDir()
	keyFile := harness.WriteKey(t, keyDir, "signin.key")
	servers := map[string]any{"secure": map[string]any{
		"url": ps.URL + "/mcp", "oauth": map[string]any{"clientId": mcpxtest.OIDCClient, "redirectUri": redirect},
	}}
	var envs []*mcpxtest.Env
	var cfgs []string
	var hosts []*mcp.ClientSession
	for i := range 2 {
		e := mcpxtest.NewEnv(t)
		cfg := e.Path("config.json")
		harness.WriteJSONFile(t, cfg, map[string]any{"mcpx": map[string]any{"store": pg, "oauth": map[string]any{"keyFile": keyFile}}, "mcpServers": servers})
		tok, err := config.Token(filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "token"))
		if err != nil {
			t.Fatal(err)
		}
		rep := harness.StartReplica(t, e, cfg, fmt.Sprint("replica-", i))
		envs, cfgs = append(envs, e), append(cfgs, cfg)
		hosts = append(hosts, harness.ConnectGoSDKHTTP(t, &harness.HTTPMCPX{URL: rep.URL, Token: tok}, "2025-11-25", harness.NewProgressLog()))
	}
	var rpcErr *jsonrpc.Error
	if _, err := harness.CallWhoami(hosts[1]); !errors.As(err, &rpcErr) || rpcErr.Code != -31006 || !strings.Contains(rpcErr.Message, "run `mcpx login secure`") {
		t.Fatalf("a call before the sign-in: %v, want -31006 saying to run mcpx login", err)
	}

	// The test reads the sign-in as a replica does: from the store, with
	// the key.
	st, err := store.OpenPostgres(t.Context(), pg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	raw, err := oauth.LoadKeys(config.SignInKey{File: keyFile}, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	recs := &oauth.Sealed{Blobs: st, Keys: raw, MaxAge: time.Nanosecond}
	load := func() *oauth.Record {
		t.Helper()
		rec, err := recs.Load(t.Context(), "secure")
		if err != nil {
			t.Fatalf("reading the sign-in from the store: %v", err)
		}
		return rec
	}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	prompts := envs[0].Path("prompts.log")
	if out := harness.McpxLogin(t, envs[0], cfgs[0], exe, prompts); !strings.Contains(out, "signed in to secure") {
		t.Fatalf("mcpx login printed %q", out)
	}
	rec := load()
	blob, err := st.Blob(t.Context(), "oauth.signin.secure")
	if err != nil || blob == nil || strings.Contains(string(blob), rec.Token.AccessToken) || strings.Contains(string(blob), rec.Token.RefreshToken) ||
		strings.Contains(string(blob), ps.URL) {
		t.Fatalf("the blob in the store (%d bytes, %v) shows the sign-in in the clear", len(blob), err)
	}
	for _, e := range envs {
		if _, err := os.Stat(filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "oauth", "secure.json")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a sign-in file next to the store: %v", err)
		}
	}
	callBoth := func(what string) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, len(hosts))
		for i, cs := range hosts {
			wg.Go(func() {
				text, err := harness.CallWhoami(cs)
				if err == nil && text != "you are "+mcpxtest.OIDCUser {
					err = fmt.Errorf("answered %q", text)
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: the call through replica %d: %v", what, i, err)
			}
		}
	}
	callBoth("after the login through replica 0")

	// The server refuses the token; both replicas find out at once and
	// race to refresh it: one does, the other uses its token.
	for round := range 3 {
		before := load().Token.AccessToken
		from := ps.SeenCount()
		ps.Expire(before)
		callBoth(fmt.Sprint("refresh race ", round))
		after := load().Token.AccessToken
		if got := ps.TokensSince(from); after == before || !slices.Equal(got, []string{after}) {
			t.Fatalf("race %d: the server was sent %d new tokens, want one (the stored one)", round, len(got))
		}
	}

	// Nearing its expiry, the token is refreshed with no call.
	before := setSealedExpiry(t, recs, time.Now().Add(5*time.Second))
	waitFor(t, 45*time.Second, "a background refresh", func() bool { return load().Token.AccessToken != before })
	from := ps.SeenCount()
	callBoth("after the background refresh")
	if got := ps.TokensSince(from); !slices.Equal(got, []string{load().Token.AccessToken}) {
		t.Fatalf("after the background refresh the server was sent %d tokens, want the refreshed one only", len(got))
	}

	// The refresh token revoked at the provider: the next refresh is
	// refused, and the sign-in shows as revoked.
	cur := load()
	onlyRefresh := *cur
	onlyRefresh.Token = oauth.Token{RefreshToken: cur.Token.RefreshToken}
	if ok, err := (&oauth.Client{}).Revoke(t.Context(), &onlyRefresh); !ok || err != nil {
		t.Fatalf("revoking the refresh token at the provider: %v %v", ok, err)
	}
	setSealedExpiry(t, recs, time.Now().Add(5*time.Second))
	waitFor(t, 45*time.Second, "the refused refresh noted", func() bool { return load().Refused != nil })
	stdout, stderr, _ := envs[1].Run(30*time.Second, "status", "--config", cfgs[1])
	if !strings.Contains(stdout, "sign-in revoked") || !strings.Contains(stdout, "mcpx login secure") {
		t.Fatalf("mcpx status after the revocation:\n%s%s", stdout, stderr)
	}
	for i, cs := range hosts {
		_, err := harness.CallWhoami(cs)
		if !errors.As(err, &rpcErr) || rpcErr.Code != -31006 || !strings.Contains(rpcErr.Message, "refused the refresh token") {
			t.Fatalf("a call through replica %d after the revocation: %v", i, err)
		}
	}
	if out := harness.McpxLogin(t, envs[1], cfgs[1], exe, prompts); !strings.Contains(out, "signed in to secure") {
		t.Fatalf("mcpx login through replica 1 printed %q", out)
	}
	callBoth("after signing in again")
	if n := harness.CountLines(t, prompts); n != 2 {
		t.Fatalf("the user was prompted %d times, want twice (the first login and after the revocation)", n)
	}

	// Another key opens nothing and says which; no key at all says how
	// to name one.
	e := mcpxtest.NewEnv(t)
	wrong := e.Path("wrong.json")
	harness.WriteJSONFile(t, wrong, map[string]any{"mcpx": map[string]any{"store": pg, "oauth": map[string]any{"keyFile": harness.WriteKey(t, keyDir, "other.key")}}, "mcpServers": servers})
	stdout, stderr, _ = e.Run(30*time.Second, "status", "--config", wrong)
	if !strings.Contains(stdout, "unreadable") || !strings.Contains(stdout, "sealed with key "+raw.ID()) {
		t.Fatalf("status with another key:\n%s%s", stdout, stderr)
	}
	none := e.Path("none.json")
	harness.WriteJSONFile(t, none, map[string]any{"mcpx": map[string]any{"store": pg, "oauth": map[string]any{"keyFile": filepath.Join(keyDir, "absent.key")}}, "mcpServers": servers})
	_, stderr, code := e.Run(30*time.Second, "logout", "--config", none, "secure")
	if code == 0 || !strings.Contains(stderr, "reading the sign-in key (mcpx.oauth.keyFile") {
		t.Fatalf("logout with a missing key file: exit %d, %s", code, stderr)
	}
	if load().Refused != nil {
		t.Fatal("the failed logout changed the sign-in")
	}
}

// setSealedExpiry rewrites the stored token's expiry (an hour's token,
// as time passing would) and returns its access token.
func setSealedExpiry(t *testing.T, recs oauth.Records, at time.Time) string {
	t.Helper()
	rec, err := recs.Update(t.Context(), "secure", func(cur *oauth.Record) (*oauth.Record, error) {
		next := *cur
		next.Token.Expiry, next.Token.Obtained = at, at.Add(-time.Hour)
		return &next, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec.Token.AccessToken
}

func waitFor(t *testing.T, limit time.Duration, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
