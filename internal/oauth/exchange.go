package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"mcpx/internal/config"
)

// Token exchange (RFC 8693). A per-person server whose upstream trusts
// the identity provider that people sign in to mcpx with can be given a
// person's token without a browser step: mcpx, as the client the
// provider lets exchange tokens, posts the person's own access token
// (the subject token) to the provider's token endpoint and asks for an
// access token for the upstream (its audience and resource). The answer
// is saved as the person's record of the server, as their browser's
// sign-in would be, and refreshed the same way when it came with a
// refresh token; without one, the next call after it expires exchanges
// again.
//
// The subject token is only read here: it is sent to the configured
// token endpoint and neither kept, logged nor put into an error.

// Token type identifiers (RFC 8693 §3).
const (
	TokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
	grantTokenExchange   = "urn:ietf:params:oauth:grant-type:token-exchange"
)

// ExchangeError is a failed exchange: the provider refused it (Refused,
// with the provider's answer in Err) or could not be asked.
type ExchangeError struct {
	Server  string
	Refused bool
	Err     error

	kept bool // the provider answered; keeping its token failed
}

func (e *ExchangeError) Error() string {
	if e.Refused {
		return fmt.Sprintf("the identity provider refused to exchange your token for one of %q: %v", e.Server, e.Err)
	}
	return fmt.Sprintf("exchanging your token for one of %q: %v", e.Server, e.Err)
}

func (e *ExchangeError) Unwrap() error { return e.Err }

// Exchanger fills people's records of per-person servers configured
// with a token exchange.
type Exchanger struct {
	Records Records
	HTTP    *http.Client // nil: a client with a 30 s timeout

	failures exchangeFailures
}

// ExchangeForm is the token request that exchanges subject for a token
// of te's upstream (RFC 8693 §2.1); the client authenticates apart.
func ExchangeForm(te *config.TokenExchange, subject string) url.Values {
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {TokenTypeAccessToken},
		"requested_token_type": {TokenTypeAccessToken},
	}
	if te.Audience != "" {
		form.Set("audience", te.Audience)
	}
	if te.Resource != "" {
		form.Set("resource", te.Resource)
	}
	if len(te.Scopes) > 0 {
		form.Set("scope", strings.Join(te.Scopes, " "))
	}
	return form
}

// Exchange exchanges subject, principal's access token at the identity
// provider, for a token of srv and saves it as principal's record of srv.
// The error is an *ExchangeError. After a failure, principal's next
// exchanges for srv wait (exchangeback.go): until then the error is the
// last failure's, wrapped in a *BackoffError, and the provider is not
// asked.
func (x *Exchanger) Exchange(ctx context.Context, srv *config.Server, principal, subject string) error {
	key := srv.Name + "\x00" + principal
	if err := x.failures.waiting(key, time.Now()); err != nil {
		be := err.(*BackoffError)
		xe, _ := be.Last.(*ExchangeError)
		refused := xe != nil && xe.Refused
		if xe != nil {
			be.Last = xe.Err
		}
		return &ExchangeError{Server: srv.Name, Refused: refused, Err: be}
	}
	err := x.exchange(ctx, srv, principal, subject)
	var xe *ExchangeError
	switch {
	case err == nil:
		x.failures.succeeded(key)
	case ctx.Err() != nil, errors.As(err, &xe) && xe.kept, subject == "":
		// The caller gave up, mcpx could not keep the token, or there
		// was nothing to exchange: no word on the provider.
	default:
		x.failures.fail(key, err, time.Now())
	}
	return err
}

func (x *Exchanger) exchange(ctx context.Context, srv *config.Server, principal, subject string) error {
	if srv.OAuth == nil || srv.OAuth.TokenExchange == nil {
		return &ExchangeError{Server: srv.Name, Err: errors.New("the server has no tokenExchange")}
	}
	if principal == "" || subject == "" {
		return &ExchangeError{Server: srv.Name, Err: errors.New("only a person signed in with an access token can exchange it")}
	}
	te := srv.OAuth.TokenExchange
	reg := Registration{ClientID: te.ClientID, ClientSecret: te.ClientSecret, AuthMethod: "client_secret_basic", How: "configured"}
	if te.ClientSecret == "" {
		reg.AuthMethod = "none"
	}
	h := x.HTTP
	if h == nil {
		h = &http.Client{Timeout: 30 * time.Second}
	}
	c := &Client{HTTP: h}
	endpoint, err := x.tokenEndpoint(ctx, c, te)
	if err != nil {
		return &ExchangeError{Server: srv.Name, Err: err}
	}
	resp, err := c.postForm(ctx, endpoint, &reg, ExchangeForm(te, subject))
	if err != nil {
		return &ExchangeError{Server: srv.Name, Err: err}
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken     string `json:"access_token"`
		IssuedTokenType string `json:"issued_token_type"`
		TokenType       string `json:"token_type"`
		RefreshToken    string `json:"refresh_token"`
		ExpiresIn       int64  `json:"expires_in"`
		Scope           string `json:"scope"`
		Error           string `json:"error"`
		Description     string `json:"error_description"`
	}
	derr := c.decode(resp, "the token exchange", &out)
	switch {
	case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return &ExchangeError{Server: srv.Name, Refused: true, Err: &TokenError{Status: resp.StatusCode, Code: out.Error, Description: out.Description}}
	case resp.StatusCode != http.StatusOK:
		return &ExchangeError{Server: srv.Name, Err: &TokenError{Status: resp.StatusCode, Code: out.Error, Description: out.Description}}
	case derr != nil:
		return &ExchangeError{Server: srv.Name, Err: derr}
	case out.AccessToken == "" || !strings.EqualFold(out.TokenType, "bearer"):
		return &ExchangeError{Server: srv.Name, Err: errors.New("the answer has no bearer access token")}
	case out.IssuedTokenType != "" && out.IssuedTokenType != TokenTypeAccessToken:
		return &ExchangeError{Server: srv.Name, Err: fmt.Errorf("the answer is a %s, not an access token", out.IssuedTokenType)}
	}
	now := time.Now()
	rec := &Record{Server: srv.Name, ServerURL: srv.URL, Resource: te.Resource, Principal: principal, Scopes: te.Scopes,
		Metadata: ServerMetadata{TokenEndpoint: endpoint}, Client: reg, SignedIn: now,
		Token: Token{AccessToken: out.AccessToken, RefreshToken: out.RefreshToken, Scope: out.Scope, Obtained: now}}
	if out.ExpiresIn > 0 {
		rec.Token.Expiry = now.Add(time.Duration(out.ExpiresIn) * time.Second)
	}
	if err := x.Records.Save(ctx, rec); err != nil {
		return &ExchangeError{Server: srv.Name, Err: fmt.Errorf("keeping the exchanged token: %w", err), kept: true}
	}
	return nil
}
