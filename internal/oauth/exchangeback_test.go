package oauth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"mcpx/internal/config"
)

// roundTrip is an identity provider answered in-process, so that its
// exchanges run in a synctest bubble: refuse says whether to refuse a
// token request; its metadata names its token endpoint.
type fakeIdP struct {
	refuse          atomic.Bool
	tokens, lookups atomic.Int32
}

func (f *fakeIdP) RoundTrip(r *http.Request) (*http.Response, error) {
	answer := func(status int, body string) (*http.Response, error) {
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		f.lookups.Add(1)
		return answer(200, `{"issuer":"https://idp.example","authorization_endpoint":"https://idp.example/authorize",
			"token_endpoint":"https://idp.example/oauth/token","code_challenge_methods_supported":["S256"]}`)
	case "/oauth/token":
		f.tokens.Add(1)
		if f.refuse.Load() {
			return answer(400, `{"error":"invalid_grant","error_description":"no impersonation"}`)
		}
		return answer(200, `{"access_token":"up","token_type":"Bearer","expires_in":300}`)
	}
	return answer(404, `{}`)
}

// After a failed exchange, the same person's exchanges for the server
// wait 1 s, then 2 s, 4 s, ... at most 5 min, answered at once with the
// last reason and without asking the provider; another person is not
// held back; a success forgets the failures. The endpoint comes from
// the issuer's metadata, asked for once.
func TestExchangeBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		idp := &fakeIdP{}
		idp.refuse.Store(true)
		srv := &config.Server{Name: "gh", URL: "https://up.example/mcp", OAuth: &config.OAuth{Accounts: config.AccountsPerPerson,
			TokenExchange: &config.TokenExchange{Issuer: "https://idp.example", ClientID: "mcpx", Audience: "up"}}}
		x := &Exchanger{Records: &Store{Dir: t.TempDir()}, HTTP: &http.Client{Transport: idp}}
		ctx := context.Background()
		bob := "person:https://idp#bob"
		exchange := func(who string) error { return x.Exchange(ctx, srv, who, "subject") }

		if err := exchange(bob); err == nil || !strings.Contains(err.Error(), "no impersonation") {
			t.Fatalf("the first exchange: %v, want the provider's refusal", err)
		}
		wait := time.Second
		for range 12 {
			err := exchange(bob)
			var be *BackoffError
			var xe *ExchangeError
			if !errors.As(err, &be) || !errors.As(err, &xe) || !xe.Refused || be.Retry != wait || !strings.Contains(err.Error(), "no impersonation") {
				t.Fatalf("an exchange right after a refusal: %v, want a refusal waiting %s with the last reason", err, wait)
			}
			n := idp.tokens.Load()
			time.Sleep(wait)
			if err := exchange(bob); err == nil || idp.tokens.Load() != n+1 {
				t.Fatalf("after %s: %v, %d token requests; want the provider asked once more, and refusing", wait, err, idp.tokens.Load()-n)
			}
			wait = min(2*wait, 5*time.Minute)
		}
		if wait != 5*time.Minute {
			t.Fatalf("the wait grew to %s, want it held at 5m", wait)
		}
		// Another person is asked for at once.
		n := idp.tokens.Load()
		if err := exchange("person:https://idp#carol"); err == nil || idp.tokens.Load() != n+1 {
			t.Fatalf("carol's exchange: %v; the provider was not asked", err)
		}
		// A success resets bob's wait.
		idp.refuse.Store(false)
		time.Sleep(5 * time.Minute)
		if err := exchange(bob); err != nil {
			t.Fatal(err)
		}
		idp.refuse.Store(true)
		exchange(bob)
		var be *BackoffError
		if err := exchange(bob); !errors.As(err, &be) || be.Retry != time.Second {
			t.Fatalf("after a success and a refusal: %v, want a wait of 1s", err)
		}
		if idp.lookups.Load() != 1 {
			t.Errorf("the issuer's metadata was fetched %d times, want once", idp.lookups.Load())
		}
	})
}

// The failures remembered are bounded.
func TestExchangeBackoffBound(t *testing.T) {
	var f exchangeFailures
	now := time.Now()
	for i := range exchangeBackoffKeep + 10 {
		f.fail(string(rune(i)), errors.New("no"), now)
	}
	if len(f.failed) > exchangeBackoffKeep {
		t.Fatalf("%d failures kept, want at most %d", len(f.failed), exchangeBackoffKeep)
	}
}
