package liveview

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestLiveViewNoCookie: in headless Chromium, the live view keeps its
// credential where no other loopback port reaches it. Opening the link
// sets no cookie (a cookie is not bound to a port: a page another local
// user serves on 127.0.0.1:OTHER would receive it); the link's token is
// taken off the URL; a page on another port of the same browser gets no
// cookie and none of the view's session storage; the view's data is
// refused to a request without the session header and given with it.
func TestLiveViewNoCookie(t *testing.T) {
	bctx := harness.Chromium(t)
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	e.StartHost(mcpxtest.Daemon, cfg).Initialize("2025-11-25")

	var mu sync.Mutex
	var cookies []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cookies = append(cookies, r.Header.Get("Cookie"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<!doctype html><title>another user's page</title>"))
	}))
	defer other.Close()

	link := harness.UiLink(t, e, cfg)
	origin := link[:strings.Index(link, "/ui/")]
	if err := chromedp.Do(bctx, chromedp.Navigate(link)); err != nil {
		t.Fatalf("opening the link: %v", err)
	}
	harness.PollPage(t, bctx, "the page live", `document.querySelector("#conn.live") !== null`)
	if hash, err := chromedp.Run(bctx, chromedp.Evaluate[string](`location.hash`)); err != nil || hash != "" {
		t.Errorf("the link's token is still in the URL: %q %v", hash, err)
	}
	res, err := chromedp.Call(bctx, network.GetCookies, network.GetCookiesParams{URLs: []string{link, origin + "/ui/state", other.URL + "/ui/"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cookies) != 0 {
		t.Errorf("the view set cookies: %+v", res.Cookies[0])
	}
	status := func(expr string) float64 {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[float64](expr, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	if s := status(`fetch("/ui/state").then(r => r.status)`); s != http.StatusForbidden {
		t.Errorf("the page's request for state without the session header: %v, want 403", s)
	}
	if s := status(`fetch("/ui/state", {headers: {"Mcpx-Ui-Session": sessionStorage.getItem("mcpx-ui-session")}}).then(r => r.status)`); s != http.StatusOK {
		t.Errorf("with the session header: %v, want 200", s)
	}

	// Another user's page on another loopback port, in the same browser.
	for _, path := range []string{"/", "/ui/"} {
		if err := chromedp.Do(bctx, chromedp.Navigate(other.URL+path)); err != nil {
			t.Fatal(err)
		}
		if n, err := chromedp.Run(bctx, chromedp.Evaluate[float64](`sessionStorage.length`)); err != nil || n != 0 {
			t.Errorf("the other origin's page sees %v items of session storage (%v)", n, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, c := range cookies {
		if c != "" {
			t.Errorf("a page on another port received the cookie %q", c)
		}
	}
}
