package oauth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"mcpx/internal/mcp"
)

// Browser shows the user the URL that starts a sign-in: it opens a
// browser, prints the URL, or (in tests and the conformance suite)
// fetches it as a user agent would, keeping cookies. The URL is a page of
// mcpx's loopback listener that works once and leads on to the
// authorization server; the redirect back is taken only from the user
// agent that opened it. It returns once the URL is on its way.
type Browser func(ctx context.Context, authURL string) error

// LoginRequest asks for a sign-in to one server.
type LoginRequest struct {
	Server   string
	URL      string // the server's configured URL
	Settings Settings
	// Challenge is the server's challenge that asked for the sign-in; nil
	// to ask the server (an unauthenticated request).
	Challenge *Challenge
	// Previous is the server's current record, for a step-up: its scopes
	// are requested again along with the challenge's.
	Previous *Record
	Browser  Browser
}

// Login runs the authorization code flow for one server and returns the
// record to store.
func (c *Client) Login(ctx context.Context, req LoginRequest) (*Record, error) {
	return c.login(ctx, req, nil)
}

// SignIn is Login and then save, before the browser's page says the
// sign-in is done.
func (c *Client) SignIn(ctx context.Context, req LoginRequest, save func(*Record) error) (*Record, error) {
	return c.login(ctx, req, save)
}

func (c *Client) login(ctx context.Context, req LoginRequest, save func(*Record) error) (rec *Record, err error) {
	if req.Browser == nil {
		return nil, errors.New("no way to show the authorization URL")
	}
	ch, refused := req.Challenge, true
	if ch == nil {
		got, r, err := c.challenge(ctx, req.URL)
		if err != nil {
			return nil, err
		}
		ch, refused = got, r
	}
	resource, md, prmScopes, err := c.discover(ctx, req.URL, ch, refused)
	if err != nil {
		return nil, err
	}
	scopes := chooseScopes(req.Settings.Scopes, ch, prmScopes, req.Previous)
	if slices.Contains(md.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		// mcpx wants a refresh token: the spec lets a client ask for it
		// this way where the authorization server lists it.
		scopes = append(scopes, "offline_access")
	}

	cb, err := listen(req.Settings.RedirectURI)
	if err != nil {
		return nil, err
	}
	defer cb.close()

	reg, err := c.register(ctx, md, req.Settings, cb.redirectURI)
	if err != nil {
		return nil, err
	}
	verifier := oauth2.GenerateVerifier()
	state := randomString()
	conf := &oauth2.Config{
		ClientID:     reg.ClientID,
		ClientSecret: reg.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: md.AuthorizationEndpoint, TokenURL: md.TokenEndpoint, AuthStyle: authStyle(reg.AuthMethod)},
		RedirectURL:  cb.redirectURI,
		Scopes:       scopes,
	}
	resourceOpt := oauth2.SetAuthURLParam("resource", resource)
	authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), resourceOpt)

	code, stopBrowser, err := cb.await(ctx, authURL, req.Browser, state, md)
	defer stopBrowser()
	if err != nil {
		cb.finish(err)
		return nil, err
	}
	defer func() { cb.finish(err) }() // before stopBrowser: the browser waits for it
	xctx := context.WithValue(ctx, oauth2.HTTPClient, c.limitedClient())
	tok, err := conf.Exchange(xctx, code, oauth2.VerifierOption(verifier), resourceOpt)
	if err != nil {
		return nil, fmt.Errorf("exchanging the authorization code at %s: %w", md.TokenEndpoint, err)
	}
	if !strings.EqualFold(tok.Type(), "bearer") {
		return nil, fmt.Errorf("the token endpoint issued a %q token; mcpx sends bearer tokens only", tok.Type())
	}
	rec = &Record{
		Server: req.Server, ServerURL: req.URL, Resource: resource, Metadata: *md, Client: *reg, Scopes: scopes,
		Token:    Token{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, Expiry: tok.Expiry, Obtained: time.Now()},
		SignedIn: time.Now(),
	}
	if s, ok := tok.Extra("scope").(string); ok {
		rec.Token.Scope = s
	}
	if save != nil {
		if err := save(rec); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// challenge asks the server without a token and returns its challenge
// (an empty one when it has no Bearer challenge) and whether it refused
// with 401 or 403 (if not, its metadata may still declare a sign-in).
func (c *Client) challenge(ctx context.Context, serverURL string) (*Challenge, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"`+mcp.MethodPing+`"}`))
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, false, fmt.Errorf("asking the server: %w", unwrapURLError(err))
	}
	resp.Body.Close()
	ch, _ := ParseChallenge(resp.Header)
	return &ch, resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden, nil
}

// ErrNoSignIn: the server neither refused mcpx nor publishes protected
// resource metadata.
var ErrNoSignIn = errors.New("the server answers without asking for a sign-in and publishes no protected resource metadata: it needs none")

// discover finds the resource, the authorization server's checked
// metadata and the resource's scopes_supported. A server without
// protected resource metadata is treated as the 2025-03-26 revision did:
// its origin is the authorization server, with metadata at the root
// well-known URI or, failing that, the default endpoints /authorize,
// /token and /register; that, only if the server refused mcpx.
func (c *Client) discover(ctx context.Context, serverURL string, ch *Challenge, refused bool) (resource string, md *ServerMetadata, scopes []string, err error) {
	prm, err := c.DiscoverResource(ctx, serverURL, ch)
	var none *noMetadataError
	if errors.As(err, &none) && !refused {
		return "", nil, nil, ErrNoSignIn
	}
	if errors.As(err, &none) && ch.ResourceMetadata == "" {
		md, lerr := c.legacyServer(ctx, serverURL)
		if lerr != nil {
			return "", nil, nil, fmt.Errorf("%v; %w", err, lerr)
		}
		return canonical(serverURL), md, nil, nil
	}
	if err != nil {
		return "", nil, nil, err
	}
	md, err = c.DiscoverServer(ctx, prm.AuthorizationServers[0])
	if err != nil {
		return "", nil, nil, err
	}
	return prm.Resource, md, prm.ScopesSupported, nil
}

func (c *Client) legacyServer(ctx context.Context, serverURL string) (*ServerMetadata, error) {
	u, _ := url.Parse(serverURL)
	origin := &url.URL{Scheme: u.Scheme, Host: u.Host}
	if err := checkSecure(origin, "the server"); err != nil {
		return nil, err
	}
	var md ServerMetadata
	err := c.getJSON(ctx, origin.String()+"/.well-known/oauth-authorization-server", "authorization server metadata", &md)
	var se *httpStatusError
	switch {
	case errors.As(err, &se) && se.status == http.StatusNotFound:
		o := origin.String()
		md = ServerMetadata{Issuer: o, AuthorizationEndpoint: o + "/authorize", TokenEndpoint: o + "/token", RegistrationEndpoint: o + "/register"}
		return &md, nil
	case err != nil:
		return nil, err
	}
	// The 2025-03-26 revision bound no issuer: the metadata's endpoints
	// must still be on the server's origin.
	if !slices.Contains(md.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("the server's authorization metadata does not list S256 in code_challenge_methods_supported; the MCP authorization spec has clients refuse to proceed without PKCE")
	}
	return &md, checkEndpoints(&md, origin)
}

// canonical is the server URL as an RFC 8707 resource: no fragment, no
// trailing slash, lower-case scheme and host.
func canonical(serverURL string) string {
	u, err := url.Parse(serverURL)
	if err != nil {
		return serverURL
	}
	u.Fragment, u.RawFragment = "", ""
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	s := u.String()
	return strings.TrimSuffix(s, "/")
}

// chooseScopes: the config's scopes when it sets them; else the
// challenge's, else the resource's scopes_supported, else none (the scope
// parameter left out); with a previous sign-in, its scopes too (step-up
// keeps what was granted).
func chooseScopes(configured []string, ch *Challenge, supported []string, prev *Record) []string {
	var s []string
	switch {
	case len(configured) > 0:
		s = slices.Clone(configured)
	case ch != nil && len(ch.Scopes) > 0:
		s = slices.Clone(ch.Scopes)
	default:
		s = slices.Clone(supported)
	}
	if prev != nil {
		for _, p := range prev.Scopes {
			if !slices.Contains(s, p) {
				s = append(s, p)
			}
		}
		if ch != nil {
			for _, p := range ch.Scopes {
				if !slices.Contains(s, p) {
					s = append(s, p)
				}
			}
		}
	}
	return s
}

func authStyle(method string) oauth2.AuthStyle {
	if method == "client_secret_basic" {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func equalSecret(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
