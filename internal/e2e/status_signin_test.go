package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/mcpxtest"
	"mcpx/internal/oauth"
)

// TestStatusSignIns: mcpx status --json (the status the live view shows)
// names each HTTP server's sign-in: one signed in, with its token's
// expiry and whether it can be renewed; one signed in to a URL the config
// no longer names; one never signed in. No token appears.
func TestStatusSignIns(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	doc := map[string]any{"mcpServers": map[string]any{
		"secure": map[string]any{"url": "http://127.0.0.1:9/mcp"},
		"moved":  map[string]any{"url": "http://127.0.0.1:9/new"},
		"open":   map[string]any{"url": "http://127.0.0.1:9/open"},
		"ended":  map[string]any{"url": "http://127.0.0.1:9/ended"},
	}}
	b, _ := json.Marshal(doc)
	cfg := e.Path("config.json")
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	store := &oauth.Store{Dir: filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "oauth")}
	expiry := time.Now().Add(time.Hour).Truncate(time.Second).UTC()
	signedIn := time.Now().Add(-time.Minute).Truncate(time.Second).UTC()
	for _, r := range []*oauth.Record{
		{Server: "secure", ServerURL: "http://127.0.0.1:9/mcp", SignedIn: signedIn,
			Token: oauth.Token{AccessToken: "secret-access", RefreshToken: "secret-refresh", Expiry: expiry}},
		{Server: "moved", ServerURL: "http://127.0.0.1:9/old", SignedIn: signedIn, Token: oauth.Token{AccessToken: "secret-access"}},
		{Server: "ended", ServerURL: "http://127.0.0.1:9/ended", SignedIn: signedIn,
			Token:   oauth.Token{AccessToken: "secret-access", RefreshToken: "secret-refresh", Expiry: expiry},
			Refused: &oauth.Refusal{At: signedIn.Add(30 * time.Second), Reason: "the authorization server refused the refresh token"}},
	} {
		if err := store.Save(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	e.StartHost(mcpxtest.Daemon, cfg).Initialize("2025-11-25") // the daemon runs
	out, errOut, code := e.Run(waitLong, "status", "--json", "--config", cfg)
	if code != 0 {
		t.Fatalf("mcpx status --json: exit %d: %s", code, errOut)
	}
	var st struct {
		SignIns []struct {
			Server      string    `json:"server"`
			State       string    `json:"state"`
			SignedIn    time.Time `json:"signedIn"`
			Expiry      time.Time `json:"expiry"`
			Refreshable bool      `json:"refreshable"`
			Refused     time.Time `json:"refused"`
			Error       string    `json:"error"`
		} `json:"signIns"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status %s: %v", out, err)
	}
	if len(st.SignIns) != 4 {
		t.Fatalf("sign-ins %+v, want four", st.SignIns)
	}
	ended, moved, open, secure := st.SignIns[0], st.SignIns[1], st.SignIns[2], st.SignIns[3]
	if ended.Server != "ended" || ended.State != "revoked" || ended.Refreshable || !ended.Refused.Equal(signedIn.Add(30*time.Second)) ||
		!strings.Contains(ended.Error, "refused the refresh token") {
		t.Errorf("ended: %+v, want revoked, not refreshable, with when and why", ended)
	}
	if secure.Server != "secure" || secure.State != "signed_in" || !secure.Expiry.Equal(expiry) || !secure.SignedIn.Equal(signedIn) || !secure.Refreshable {
		t.Errorf("secure: %+v, want signed_in, expiry %v, refreshable", secure, expiry)
	}
	if moved.Server != "moved" || moved.State != "old_url" || !moved.Expiry.IsZero() || moved.Refreshable {
		t.Errorf("moved: %+v, want old_url without expiry", moved)
	}
	if open.Server != "open" || open.State != "not_signed_in" {
		t.Errorf("open: %+v, want not_signed_in", open)
	}
	if strings.Contains(out, "secret-") {
		t.Errorf("status shows a token:\n%s", out)
	}
	text, errOut, code := e.Run(waitLong, "status", "--config", cfg)
	if code != 0 || !strings.Contains(text, "sign-in revoked") || !strings.Contains(text, "mcpx login ended") || strings.Contains(text, "secret-") {
		t.Errorf("mcpx status: exit %d\n%s%s", code, text, errOut)
	}
}
