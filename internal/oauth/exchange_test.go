package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"mcpx/internal/config"
)

// The token request of an exchange, as the identity provider receives
// it, and the record its answer becomes.
func TestExchange(t *testing.T) {
	var got url.Values
	var user, pass string
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		got = r.PostForm
		user, pass, _ = r.BasicAuth()
		// RFC 6749 §2.3.1: both form-encoded before Basic.
		user, _ = url.QueryUnescape(user)
		pass, _ = url.QueryUnescape(pass)
		w.Header().Set("Content-Type", "application/json")
		if r.PostForm.Get("subject_token") == "revoked" {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"invalid_grant","error_description":"subject_token is invalid"}`))
			return
		}
		w.Write([]byte(`{"access_token":"up-token","issued_token_type":"` + TokenTypeAccessToken + `","token_type":"Bearer","expires_in":300,"scope":"openid"}`))
	}))
	defer idp.Close()
	srv := &config.Server{Name: "gh", URL: "https://up.example/mcp", OAuth: &config.OAuth{Accounts: config.AccountsPerPerson,
		TokenExchange: &config.TokenExchange{TokenEndpoint: idp.URL + "/token", ClientID: "mcpx client", ClientSecret: "sec:ret",
			Audience: "upstream", Resource: "https://up.example/mcp", Scopes: []string{"openid", "profile"}}}}
	recs := &Store{Dir: t.TempDir()}
	x := &Exchanger{Records: recs}
	ctx := context.Background()
	if err := x.Exchange(ctx, srv, "person:https://idp#alice", "alice-at"); err != nil {
		t.Fatal(err)
	}
	want := url.Values{
		"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token":        {"alice-at"},
		"subject_token_type":   {"urn:ietf:params:oauth:token-type:access_token"},
		"requested_token_type": {"urn:ietf:params:oauth:token-type:access_token"},
		"audience":             {"upstream"},
		"resource":             {"https://up.example/mcp"},
		"scope":                {"openid profile"},
	}
	if got.Encode() != want.Encode() {
		t.Errorf("form\n got %s\nwant %s", got.Encode(), want.Encode())
	}
	if user != "mcpx client" || pass != "sec:ret" {
		t.Errorf("client authenticated as %q:%q, want the configured client by HTTP Basic", user, pass)
	}
	rec, err := recs.Load(ctx, PersonKey("gh", "person:https://idp#alice"))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Token.AccessToken != "up-token" || rec.Principal != "person:https://idp#alice" || rec.ServerURL != srv.URL || rec.Token.Expiry.IsZero() {
		t.Errorf("record %+v: want alice's, with the exchanged token and its expiry", rec)
	}
	if strings.Contains(rec.Token.AccessToken+rec.Token.RefreshToken, "alice-at") {
		t.Error("the subject token was kept")
	}

	// Refused: an *ExchangeError that says so, the provider's answer in it,
	// the subject token not; nothing saved.
	err = x.Exchange(ctx, srv, "person:https://idp#bob", "revoked")
	var xe *ExchangeError
	if !errors.As(err, &xe) || !xe.Refused || !strings.Contains(err.Error(), "invalid_grant") || strings.Contains(err.Error(), "revoked") {
		t.Errorf("refused exchange: %v, want a refusal naming invalid_grant and not the token", err)
	}
	if _, err := recs.Load(ctx, PersonKey("gh", "person:https://idp#bob")); !errors.Is(err, ErrNoRecord) {
		t.Errorf("bob's record after a refusal: %v", err)
	}

	// The provider out of reach: not a refusal.
	idp.Close()
	err = x.Exchange(ctx, srv, "person:https://idp#alice", "alice-at")
	if !errors.As(err, &xe) || xe.Refused {
		t.Errorf("provider down: %v, want an ExchangeError that is no refusal", err)
	}
	// Not a person: nothing asked.
	if err := x.Exchange(ctx, srv, "token:ci", ""); err == nil {
		t.Error("an exchange without a subject token succeeded")
	}
}

// Without audience, resource or scopes, the form names none of them.
func TestExchangeFormMinimal(t *testing.T) {
	f := ExchangeForm(&config.TokenExchange{Audience: "up"}, "tok")
	for _, k := range []string{"resource", "scope"} {
		if _, ok := f[k]; ok {
			t.Errorf("form has %s: %s", k, f.Encode())
		}
	}
	if f.Get("audience") != "up" {
		t.Errorf("audience %q", f.Get("audience"))
	}
}
