package oauth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/oauth"
)

// TestStatusSignIns: mcpx status --json (the status the live view shows)
// names each HTTP server's sign-in: one signed in, with its token's
// expiry and whether it can be renewed; one signed in to a URL the config
// no longer names; one never signed in; one whose background refresh
// keeps failing (its authorization server answers 503), with how often,
// why and when it is tried next. No token appears.
func TestStatusSignIns(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	var tokenRequests atomic.Int32
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tokenRequests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":"temporarily_unavailable"}`))
	}))
	defer as.Close()
	doc := map[string]any{"mcpServers": map[string]any{
		"secure": map[string]any{"url": "http://127.0.0.1:9/mcp"},
		"moved":  map[string]any{"url": "http://127.0.0.1:9/new"},
		"open":   map[string]any{"url": "http://127.0.0.1:9/open"},
		"ended":  map[string]any{"url": "http://127.0.0.1:9/ended"},
		"flaky":  map[string]any{"url": "http://127.0.0.1:9/flaky"},
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
		{Server: "flaky", ServerURL: "http://127.0.0.1:9/flaky", SignedIn: signedIn,
			Metadata: oauth.ServerMetadata{TokenEndpoint: as.URL + "/token"}, Client: oauth.Registration{ClientID: "c"},
			Token: oauth.Token{AccessToken: "secret-access", RefreshToken: "secret-refresh", Expiry: time.Now().Add(time.Minute)}},
	} {
		if err := store.Save(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	e.StartHost(mcpxtest.Daemon, cfg).Initialize("2025-11-25") // the daemon runs
	var st struct {
		SignIns []struct {
			Server         string    `json:"server"`
			State          string    `json:"state"`
			SignedIn       time.Time `json:"signedIn"`
			Expiry         time.Time `json:"expiry"`
			Refreshable    bool      `json:"refreshable"`
			Refused        time.Time `json:"refused"`
			Error          string    `json:"error"`
			RefreshFailing *struct {
				Failures int       `json:"failures"`
				Error    string    `json:"error"`
				Next     time.Time `json:"next"`
			} `json:"refreshFailing"`
		} `json:"signIns"`
	}
	var out string
	// The daemon's background refresh of flaky fails at its start.
	for deadline := time.Now().Add(harness.WaitLong); ; {
		var errOut string
		var code int
		out, errOut, code = e.Run(harness.WaitLong, "status", "--json", "--config", cfg)
		if code != 0 {
			t.Fatalf("mcpx status --json: exit %d: %s", code, errOut)
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("status %s: %v", out, err)
		}
		if len(st.SignIns) != 5 {
			t.Fatalf("sign-ins %+v, want five", st.SignIns)
		}
		if st.SignIns[1].RefreshFailing != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("flaky's failing refresh never showed (%d token requests): %s", tokenRequests.Load(), out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ended, flaky, moved, open, secure := st.SignIns[0], st.SignIns[1], st.SignIns[2], st.SignIns[3], st.SignIns[4]
	if f := flaky.RefreshFailing; flaky.Server != "flaky" || flaky.State != "signed_in" || f.Failures < 1 || int(tokenRequests.Load()) < f.Failures ||
		!strings.Contains(f.Error, "temporarily_unavailable") || !f.Next.After(time.Now().Add(-time.Second)) {
		t.Errorf("flaky: %+v %+v, want signed in, its refresh failing with the server's error and a next try", flaky, f)
	}
	for _, s := range st.SignIns {
		if s.Server != "flaky" && s.RefreshFailing != nil {
			t.Errorf("%s shows a failing refresh: %+v", s.Server, s.RefreshFailing)
		}
	}
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
	text, errOut, code := e.Run(harness.WaitLong, "status", "--config", cfg)
	if code != 0 || !strings.Contains(text, "sign-in revoked") || !strings.Contains(text, "mcpx login ended") || strings.Contains(text, "secret-") ||
		!strings.Contains(text, "refreshing it failed") {
		t.Errorf("mcpx status: exit %d\n%s%s", code, text, errOut)
	}
}
