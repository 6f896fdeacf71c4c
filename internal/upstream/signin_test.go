package upstream

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"mcpx/internal/config"
)

// signInNeeded is how a round tripper of Options.Authorize says a server
// needs a sign-in (internal/oauth's SignInError).
type signInNeeded struct{}

func (signInNeeded) Error() string                                    { return "needs a sign-in" }
func (signInNeeded) SignIn() (server, reason string, scopes []string) { return "", "", nil }

type refuseUnauthorized struct {
	base  http.RoundTripper
	calls *atomic.Int64
}

func (r refuseUnauthorized) RoundTrip(req *http.Request) (*http.Response, error) {
	r.calls.Add(1)
	resp, err := r.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		resp.Body.Close()
		return nil, signInNeeded{}
	}
	return resp, err
}

// A server that needs a sign-in fails its start with the round tripper's
// error, and is not held back by the restart backoff: the user signs in
// and the next call must reach it at once. A server with its own
// Authorization header is not given to the round tripper.
func TestSignInNeededNoBackoff(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer ts.Close()
	for _, withHeader := range []bool{false, true} {
		var calls atomic.Int64
		srv := &config.Server{URL: ts.URL}
		if withHeader {
			srv.Headers = map[string]string{"authorization": "Bearer static"}
		}
		p := startPool(t, srv, &Options{Authorize: func(_ *config.Server, _ string, base http.RoundTripper) http.RoundTripper {
			return refuseUnauthorized{base: base, calls: &calls}
		}})
		for i := range 2 {
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			_, err := p.Session(ctx, "up")
			cancel()
			switch {
			case withHeader && (calls.Load() != 0 || err == nil || errors.As(err, new(signInNeeded))):
				t.Fatalf("with its own header: %v after %d round trips; want the 401 itself, no sign-in", err, calls.Load())
			case !withHeader && !errors.As(err, new(signInNeeded)):
				t.Fatalf("start %d: %v, want the sign-in error", i+1, err)
			case !withHeader && strings.Contains(err.Error(), "in a row"):
				t.Fatalf("start %d waited out a backoff: %v", i+1, err)
			}
		}
	}
}
