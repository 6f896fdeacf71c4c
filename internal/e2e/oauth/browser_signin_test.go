package oauth

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/oauth"
)

// TestLiveViewSignInsBrowser: the live view, in headless Chromium, shows
// a sign-in whose refresh token was refused as revoked, saying to sign in
// again, next to one signed in and one whose background refresh keeps
// failing (its authorization server answers 503); no token reaches the
// page.
func TestLiveViewSignInsBrowser(t *testing.T) {
	bctx := harness.Chromium(t)
	e := mcpxtest.NewEnv(t)
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":"temporarily_unavailable"}`))
	}))
	defer as.Close()
	cfg := e.Path("config.json")
	harness.WriteJSONFile(t, cfg, map[string]any{"mcpServers": map[string]any{
		"secure": map[string]any{"url": "http://127.0.0.1:9/mcp"},
		"ended":  map[string]any{"url": "http://127.0.0.1:9/ended"},
		"flaky":  map[string]any{"url": "http://127.0.0.1:9/flaky"},
	}})
	store := &oauth.Store{Dir: filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "oauth")}
	now := time.Now()
	for _, r := range []*oauth.Record{
		{Server: "secure", ServerURL: "http://127.0.0.1:9/mcp", SignedIn: now,
			Token: oauth.Token{AccessToken: "secret-access", RefreshToken: "secret-refresh", Expiry: now.Add(time.Hour)}},
		{Server: "ended", ServerURL: "http://127.0.0.1:9/ended", SignedIn: now.Add(-time.Hour),
			Token:   oauth.Token{AccessToken: "secret-access", RefreshToken: "secret-refresh", Expiry: now.Add(-time.Minute)},
			Refused: &oauth.Refusal{At: now.Add(-time.Minute), Reason: "the authorization server refused the refresh token"}},
		{Server: "flaky", ServerURL: "http://127.0.0.1:9/flaky", SignedIn: now,
			Metadata: oauth.ServerMetadata{TokenEndpoint: as.URL + "/token"}, Client: oauth.Registration{ClientID: "c"},
			Token: oauth.Token{AccessToken: "secret-access", RefreshToken: "secret-refresh", Expiry: now.Add(time.Minute)}},
	} {
		if err := store.Save(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	e.StartHost(mcpxtest.Daemon, cfg).Initialize("2025-11-25")
	if err := chromedp.Do(bctx, chromedp.Navigate(harness.UiLink(t, e, cfg))); err != nil {
		t.Fatalf("opening the link: %v", err)
	}
	harness.PollPage(t, bctx, "the revoked sign-in in the page", `(() => {
		const r = document.querySelector('#signins tr[data-signin="ended"][data-state="revoked"]');
		return r !== null && r.textContent.includes("refresh token was refused") && r.textContent.includes("mcpx login ended") })()`)
	harness.PollPage(t, bctx, "the signed-in one", `(() => {
		const r = document.querySelector('#signins tr[data-signin="secure"][data-state="signed_in"]');
		return r !== null && r.textContent.includes("expires in") })()`)
	harness.PollPage(t, bctx, "the failing refresh", `(() => {
		const r = document.querySelector('#signins tr[data-signin="flaky"][data-state="signed_in"]');
		return r !== null && r.textContent.includes("refreshing it failed") && r.textContent.includes("temporarily_unavailable") })()`)
	harness.PollPage(t, bctx, "no token in the page", `!document.body.innerHTML.includes("secret-")`)
}
