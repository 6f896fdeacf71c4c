package oauth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// tokenEndpoint answers refresh grants in memory (the narrow seam of the
// refresher's HTTP client), with what fail says for the n-th one.
type tokenEndpoint struct {
	mu       sync.Mutex
	grants   []time.Time // when each refresh grant came
	lifetime int         // expires_in of each token issued
	fail     func(n int) (status int, code string)
}

func (te *tokenEndpoint) RoundTrip(req *http.Request) (*http.Response, error) {
	_ = req.ParseForm()
	te.mu.Lock()
	te.grants = append(te.grants, time.Now())
	n, lifetime := len(te.grants), te.lifetime
	te.mu.Unlock()
	status, body := http.StatusOK, fmt.Sprintf(`{"access_token":"at-%d","token_type":"Bearer","refresh_token":"rt-%d","expires_in":%d}`, n, n, lifetime)
	if te.fail != nil {
		if s, code := te.fail(n); s != 0 {
			status, body = s, fmt.Sprintf(`{"error":%q}`, code)
		}
	}
	if req.Form.Get("grant_type") != "refresh_token" || req.Form.Get("resource") != "https://s/mcp" {
		status, body = http.StatusBadRequest, `{"error":"invalid_request"}`
	}
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

func (te *tokenEndpoint) count() int {
	te.mu.Lock()
	defer te.mu.Unlock()
	return len(te.grants)
}

// signedIn stores a sign-in whose token, obtained an hour ago, expires
// after left.
func signedIn(t *testing.T, recs Records, left time.Duration) {
	t.Helper()
	now := time.Now()
	rec := &Record{Server: "s", ServerURL: "https://s/mcp", Resource: "https://s/mcp",
		Metadata: ServerMetadata{TokenEndpoint: "https://as/token"}, Client: Registration{ClientID: "c"},
		Token: Token{AccessToken: "at-0", RefreshToken: "rt-0", Obtained: now.Add(-time.Hour), Expiry: now.Add(left)}}
	if err := recs.Save(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
}

// runRefreshers runs one refresher per Records (gateways sharing them)
// until the returned stop.
func runRefreshers(te *tokenEndpoint, all ...Records) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, recs := range all {
		r := &Refresher{Records: recs, HTTP: &http.Client{Transport: te},
			Targets: func() []Target { return []Target{{Server: "s", URL: "https://s/mcp"}} }}
		wg.Go(func() { _ = r.Run(ctx) })
	}
	return func() { cancel(); wg.Wait() }
}

// A token is refreshed BackgroundAhead before it expires, with nothing
// asking for it, and so is the new one (an hour's); one whose lifetime is
// short, a quarter of it ahead. Two gateways sharing the records refresh
// it once.
func TestRefresherAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		a, b := &Store{Dir: dir}, &Store{Dir: dir}
		signedIn(t, a, 10*time.Minute)
		te := &tokenEndpoint{lifetime: 3600}
		stop := runRefreshers(te, a, b)
		defer stop()
		start := time.Now()
		time.Sleep(5*time.Minute - time.Second)
		synctest.Wait()
		if n := te.count(); n != 0 {
			t.Fatalf("%d refreshes before the token was due", n)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := te.count(); n != 1 {
			t.Fatalf("%d refreshes once due, want 1 of two gateways", n)
		}
		rec, err := b.Load(t.Context(), "s")
		if err != nil || rec.Token.AccessToken != "at-1" || rec.Token.RefreshToken != "rt-1" {
			t.Fatalf("the stored token after the refresh: %v", err)
		}
		if got := te.grants[0].Sub(start); got != 5*time.Minute {
			t.Fatalf("refreshed %v after start, want 5m (10m left, 5m ahead)", got)
		}
		time.Sleep(55*time.Minute - 2*time.Second)
		synctest.Wait()
		if n := te.count(); n != 1 {
			t.Fatalf("%d refreshes before the new token was due", n)
		}
		te.mu.Lock()
		te.lifetime = 60 // the next tokens live a minute: refreshed 15 s ahead
		te.mu.Unlock()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := te.count(); n != 2 {
			t.Fatalf("%d refreshes, want the second 5m before the hour's token expires", n)
		}
		time.Sleep(45*time.Second - 2*time.Second) // the refresh was 1 s ago
		synctest.Wait()
		if n := te.count(); n != 2 {
			t.Fatalf("%d refreshes before the minute's token was due", n)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := te.count(); n != 3 {
			t.Fatalf("%d refreshes, want the third 15 s before the minute's token expires", n)
		}
	})
}

// A failing token endpoint is tried again after 5 s, 10 s, 20 s…; the
// sign-in is kept meanwhile, and the token refreshed once it answers.
func TestRefresherBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recs := &Store{Dir: t.TempDir()}
		signedIn(t, recs, time.Minute)
		te := &tokenEndpoint{lifetime: 3600, fail: func(n int) (int, string) {
			if n <= 4 {
				return http.StatusServiceUnavailable, "temporarily_unavailable"
			}
			return 0, ""
		}}
		stop := runRefreshers(te, recs)
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		stop()
		if len(te.grants) != 5 {
			t.Fatalf("%d token requests, want 4 failures and a success", len(te.grants))
		}
		var gaps []time.Duration
		for i := 1; i < len(te.grants); i++ {
			gaps = append(gaps, te.grants[i].Sub(te.grants[i-1]))
		}
		if fmt.Sprint(gaps) != "[5s 10s 20s 40s]" {
			t.Fatalf("retries after %v, want 5s 10s 20s 40s", gaps)
		}
		rec, _ := recs.Load(t.Context(), "s")
		if rec.Token.AccessToken != "at-5" || rec.Refused != nil {
			t.Fatalf("after the endpoint recovered: %q, refused %v", rec.Token.AccessToken, rec.Refused)
		}
	})
}

// A refresh token the authorization server refuses ends the sign-in: the
// record says so (status shows it revoked), nothing tries it again, and a
// request is refused with a SignInError without reaching the server.
func TestRefresherRevoked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recs := &Store{Dir: t.TempDir()}
		signedIn(t, recs, time.Minute)
		te := &tokenEndpoint{lifetime: 3600, fail: func(int) (int, string) { return http.StatusBadRequest, "invalid_grant" }}
		stop := runRefreshers(te, recs)
		time.Sleep(time.Hour)
		synctest.Wait()
		stop()
		if n := te.count(); n != 1 {
			t.Fatalf("%d token requests, want 1: a refused refresh token is not tried again", n)
		}
		st := StateOf(t.Context(), recs, "s", "https://s/mcp")
		if st.State != Revoked || st.Refreshable || st.Refused.IsZero() || !strings.Contains(st.Err.Error(), "refused the refresh token") {
			t.Fatalf("status: %+v", st)
		}
		reached := false
		tr := &Transport{Server: "s", URL: "https://s/mcp", Store: recs, Client: &Client{}, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			reached = r.Header.Get("Authorization") != ""
			return &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{"Www-Authenticate": {`Bearer error="invalid_token"`}},
				Body: http.NoBody, Request: r}, nil
		})}
		req, _ := http.NewRequest(http.MethodPost, "https://s/mcp", nil)
		_, err := tr.RoundTrip(req)
		if se, ok := err.(*SignInError); !ok || !strings.Contains(se.Error(), "refused the refresh token") || reached {
			t.Fatalf("a request after the refusal: %v (token sent: %v)", err, reached)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
