package replicas

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestReplicasHostTokens: named host tokens live in the shared store.
// An operator on a machine of its own (its own state dir, the replicas'
// config) mints a token with `mcpx token --name`: both replicas, and
// nginx in front, accept it from its first request, though neither
// replica has its file. `mcpx token --list` lists the store's tokens;
// minting the same name where the token's file is not is refused with
// the way out, and leaves no file behind. Revoked by the operator, the
// token is refused (401) by both replicas within the recheck time (2 s),
// while the default token goes on working.
func TestReplicasHostTokens(t *testing.T) {
	c := harness.StartCluster(t, "5s")
	op := mcpxtest.NewEnv(t)
	cfg := op.WriteConfig(map[string]any{"store": c.PG}, mcpxtest.Demo{Name: "demo"})
	out, stderr, code := op.Run(30*time.Second, "token", "--name", "alice", "--config", cfg)
	tok := strings.TrimSpace(out)
	if code != 0 || len(tok) != 43 {
		t.Fatalf("mcpx token --name alice: exit %d, %q %s", code, tok, stderr)
	}
	minted := time.Now()
	discover := harness.ModernHeaders("server/discover", "")
	status := func(url, tok string) int {
		return harness.NewRawHost(t, &harness.HTTPMCPX{URL: url, Token: tok}).Do(harness.ModernDiscover, discover).Status
	}
	var firstUse time.Duration
	for i, url := range []string{c.Replicas[1].URL, c.Replicas[0].URL, c.URL, c.URL} {
		if s := status(url, tok); s != http.StatusOK {
			t.Errorf("alice's first request to %s: %d, want 200", url, s)
		}
		if i == 0 {
			firstUse = time.Since(minted)
		}
	}
	for _, e := range c.Envs {
		if _, err := os.Stat(filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "tokens", "alice")); err == nil {
			t.Fatal("a replica has alice's token file: the test proves nothing")
		}
	}
	if out, _, code := op.Run(30*time.Second, "token", "--list", "--config", cfg); code != 0 || !strings.HasPrefix(out, "alice ") {
		t.Errorf("mcpx token --list: exit %d %q, want alice", code, out)
	}
	replica := c.Envs[0]
	rcfg := replica.WriteConfig(map[string]any{"store": c.PG}, mcpxtest.Demo{Name: "demo"})
	out, stderr, code = replica.Run(30*time.Second, "token", "--name", "alice", "--config", rcfg)
	if code != 2 || out != "" || !strings.Contains(stderr, "holds another token named") || !strings.Contains(stderr, "--revoke alice") {
		t.Errorf("minting alice again where her token is not: exit %d %q %q, want 2 and the way out", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(replica.Vars["XDG_STATE_HOME"], "mcpx", "tokens", "alice")); err == nil {
		t.Error("a refused mint left its token file behind")
	}

	if out, stderr, code := op.Run(30*time.Second, "token", "--revoke", "alice", "--config", cfg); code != 0 || !strings.Contains(out, "revoked token alice") {
		t.Fatalf("mcpx token --revoke alice: exit %d %q %s", code, out, stderr)
	}
	revoked := time.Now()
	var took []time.Duration
	for _, r := range c.Replicas {
		for deadline := time.Now().Add(20 * time.Second); status(r.URL, tok) != http.StatusUnauthorized; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s still takes alice's revoked token 20 s later", r.URL)
			}
		}
		took = append(took, time.Since(revoked))
	}
	if s := status(c.URL, c.Token); s != http.StatusOK {
		t.Errorf("the default token after alice's revocation: %d", s)
	}
	if _, _, code := op.Run(30*time.Second, "token", "--revoke", "alice", "--config", cfg); code != 2 {
		t.Errorf("revoking alice twice: exit %d, want 2", code)
	}
	t.Logf("alice's token, minted on a third machine, was taken by replica B %v after mcpx token exited, then by A and nginx; revoked, refused by A after %v and B after %v", firstUse, took[0], took[1])
}
