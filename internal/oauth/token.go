package oauth

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// TokenError is an error answer of a token endpoint (RFC 6749 §5.2).
type TokenError struct {
	Status      int
	Code        string // e.g. invalid_grant
	Description string
}

func (e *TokenError) Error() string {
	msg := fmt.Sprintf("the token endpoint answered HTTP %d", e.Status)
	if e.Code != "" {
		msg += ": " + e.Code
	}
	if e.Description != "" {
		msg += " (" + e.Description + ")"
	}
	return msg
}

// postForm posts form to endpoint, authenticated as reg, and returns the
// response (the caller closes its body).
func (c *Client) postForm(ctx context.Context, endpoint string, reg *Registration, form url.Values) (*http.Response, error) {
	basic := reg.AuthMethod == "client_secret_basic"
	switch {
	case basic:
	case reg.AuthMethod == "client_secret_post":
		form.Set("client_id", reg.ClientID)
		form.Set("client_secret", reg.ClientSecret)
	default:
		form.Set("client_id", reg.ClientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic {
		req.SetBasicAuth(url.QueryEscape(reg.ClientID), url.QueryEscape(reg.ClientSecret))
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, unwrapURLError(err)
	}
	return resp, nil
}

// Refresh trades r's refresh token for a new access token, with r's
// resource (RFC 8707 §2.2: the resource goes in refresh requests too,
// which golang.org/x/oauth2's refresh cannot send) and updates r.Token. A
// server that issues no new refresh token leaves the old one in place.
func (c *Client) Refresh(ctx context.Context, r *Record) error {
	if r.Token.RefreshToken == "" {
		return fmt.Errorf("the sign-in of %q has no refresh token", r.Server)
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r.Token.RefreshToken}, "resource": {r.Resource}}
	resp, err := c.postForm(ctx, r.Metadata.TokenEndpoint, &r.Client, form)
	if err != nil {
		return fmt.Errorf("refreshing the token of %q: %w", r.Server, err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken  string `json:"access_token"`
		TokenType    string `json:"token_type"`
		RefreshToken string `json:"refresh_token"`
		ExpiresIn    int64  `json:"expires_in"`
		Scope        string `json:"scope"`
		Error        string `json:"error"`
		Description  string `json:"error_description"`
	}
	what := "refreshing the token of " + fmt.Sprintf("%q", r.Server)
	derr := c.decode(resp, what, &out)
	if resp.StatusCode != http.StatusOK {
		return &TokenError{Status: resp.StatusCode, Code: out.Error, Description: out.Description}
	}
	if derr != nil {
		return derr
	}
	if out.AccessToken == "" || !strings.EqualFold(out.TokenType, "bearer") {
		return fmt.Errorf("%s: the answer has no bearer access token", what)
	}
	r.Token.AccessToken = out.AccessToken
	if out.RefreshToken != "" {
		r.Token.RefreshToken = out.RefreshToken
	}
	r.Token.Expiry, r.Token.Obtained = time.Time{}, time.Now()
	if out.ExpiresIn > 0 {
		r.Token.Expiry = r.Token.Obtained.Add(time.Duration(out.ExpiresIn) * time.Second)
	}
	if out.Scope != "" {
		r.Token.Scope = out.Scope
	}
	return nil
}

// Revoke revokes r's tokens at the authorization server (RFC 7009): the
// refresh token, which ends the grant, then the access token. A server
// without a revocation endpoint is no error: the tokens are simply
// forgotten (the result says so).
func (c *Client) Revoke(ctx context.Context, r *Record) (revoked bool, err error) {
	if r.Metadata.RevocationEndpoint == "" {
		return false, nil
	}
	for _, t := range []struct{ tok, hint string }{{r.Token.RefreshToken, "refresh_token"}, {r.Token.AccessToken, "access_token"}} {
		if t.tok == "" {
			continue
		}
		resp, err := c.postForm(ctx, r.Metadata.RevocationEndpoint, &r.Client, url.Values{"token": {t.tok}, "token_type_hint": {t.hint}})
		if err != nil {
			return false, fmt.Errorf("revoking the %s of %q: %w", t.hint, r.Server, err)
		}
		_, _ = readBounded(resp.Body, 4<<10, "revocation")
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("revoking the %s of %q: HTTP %d", t.hint, r.Server, resp.StatusCode)
		}
	}
	return true, nil
}
