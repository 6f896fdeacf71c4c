package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"mcpx/internal/config"
)

// Gateway runs the per-person sign-ins of a gateway that people reach
// over HTTP: the authorization server sends each person's browser back to
// the gateway's own HTTP face (CallbackPath under BaseURL), not to a
// loopback port, so that a person on another machine can sign in.
//
// Begin, for a principal that a per-person server refused, prepares the
// authorization request (PKCE S256, the RFC 8707 resource, a fresh state)
// and keeps it as a pending sign-in, sealed in Pending when Keys is set:
// every replica sharing the store can take the browser's next step. It
// returns the start URL (StartPath?s=STATE), which the person's host
// opens. The start works once: it sets a cookie binding the redirect to
// that browser and sends it to the authorization server. The callback
// takes the redirect only with that cookie, once, before the pending
// sign-in expires; checks the state and the RFC 9207 iss; exchanges the
// code; and saves the tokens as the principal's own record of the server.
// The state is the credential of both steps: it is bound to the principal
// when Begin made it, and nothing in the browser's requests can change
// whom the sign-in is for.
type Gateway struct {
	Records Records
	Pending Blobs
	Keys    *Keys // seals the pending sign-ins; nil: kept as they are (MemBlobs)
	// BaseURL is the gateway's HTTP face as browsers reach it.
	BaseURL func() string
	HTTP    *http.Client  // nil: a client with a 30 s timeout
	TTL     time.Duration // how long a pending sign-in waits for its browser; 0: 10 minutes
	Log     *slog.Logger
}

// The gateway's sign-in pages.
const (
	StartPath    = "/oauth/start"
	CallbackPath = "/oauth/callback"
	cookieName   = "mcpx_signin"
)

// pending is a sign-in Begin prepared, as kept in Pending.
type pending struct {
	Server    string         `json:"server"`
	ServerURL string         `json:"serverUrl"`
	Principal string         `json:"principal"`
	Resource  string         `json:"resource"`
	Metadata  ServerMetadata `json:"authorizationServer"`
	Client    Registration   `json:"client"`
	Scopes    []string       `json:"scopes,omitempty"`
	Redirect  string         `json:"redirectUri"`
	Verifier  string         `json:"verifier"`
	AuthURL   string         `json:"authUrl"`
	Binding   string         `json:"binding"`
	Expires   time.Time      `json:"expires"`
	Started   bool           `json:"started,omitempty"`
	Taken     bool           `json:"taken,omitempty"`
}

func pendingName(state string) string {
	sum := sha256.Sum256([]byte(state))
	return "oauth.pending." + hex.EncodeToString(sum[:16])
}

func (g *Gateway) client() *Client {
	h := g.HTTP
	if h == nil {
		h = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{HTTP: h}
}

func (g *Gateway) ttl() time.Duration {
	if g.TTL > 0 {
		return g.TTL
	}
	return 10 * time.Minute
}

// Begin prepares principal's sign-in to srv and returns the URL that
// starts it in the person's browser.
func (g *Gateway) Begin(ctx context.Context, srv *config.Server, principal string) (string, error) {
	if principal == "" {
		return "", errors.New("a per-person sign-in needs a principal")
	}
	base := strings.TrimSuffix(g.BaseURL(), "/")
	if base == "" {
		return "", errors.New("the gateway has no HTTP listener for the sign-in's redirect (mcpx.http.listen)")
	}
	c := g.client()
	ch, refused, err := c.challenge(ctx, srv.URL)
	if err != nil {
		return "", err
	}
	resource, md, prmScopes, err := c.discover(ctx, srv.URL, ch, refused)
	if err != nil {
		return "", err
	}
	settings := SettingsOf(srv.OAuth)
	var prev *Record
	if r, err := g.Records.Load(ctx, PersonKey(srv.Name, principal)); err == nil && r.ServerURL == srv.URL {
		prev = r
	}
	scopes := chooseScopes(settings.Scopes, ch, prmScopes, prev)
	if slices.Contains(md.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	redirect := base + CallbackPath
	settings.RedirectURI = "" // the loopback one is mcpx login's
	reg, err := c.register(ctx, md, settings, redirect)
	if err != nil {
		return "", err
	}
	state, verifier := randomString(), oauth2.GenerateVerifier()
	conf := oauthConfig(reg, md, redirect, scopes)
	p := &pending{Server: srv.Name, ServerURL: srv.URL, Principal: principal, Resource: resource, Metadata: *md, Client: *reg,
		Scopes: scopes, Redirect: redirect, Verifier: verifier, Binding: randomString(), Expires: time.Now().Add(g.ttl()),
		AuthURL: conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))}
	blob, err := g.encode(state, p)
	if err != nil {
		return "", err
	}
	if err := g.Pending.PutBlob(ctx, pendingName(state), blob); err != nil {
		return "", fmt.Errorf("keeping the pending sign-in: %w", err)
	}
	g.log().Info("a per-person sign-in is waiting for its browser", "server", srv.Name, "principal", principal)
	return base + StartPath + "?s=" + url.QueryEscape(state), nil
}

func oauthConfig(reg *Registration, md *ServerMetadata, redirect string, scopes []string) *oauth2.Config {
	return &oauth2.Config{
		ClientID: reg.ClientID, ClientSecret: reg.ClientSecret, RedirectURL: redirect, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: md.AuthorizationEndpoint, TokenURL: md.TokenEndpoint, AuthStyle: authStyle(reg.AuthMethod)},
	}
}

func (g *Gateway) encode(state string, p *pending) ([]byte, error) {
	plain, err := json.Marshal(p)
	if err != nil || g.Keys == nil {
		return plain, err
	}
	return g.Keys.seal(pendingName(state), plain), nil
}

func (g *Gateway) decode(state string, blob []byte) (*pending, error) {
	plain := blob
	if g.Keys != nil {
		var err error
		if plain, _, err = g.Keys.open(pendingName(state), blob); err != nil {
			return nil, err
		}
	}
	var p pending
	if err := json.Unmarshal(plain, &p); err != nil {
		return nil, fmt.Errorf("the pending sign-in is unreadable: %w", err)
	}
	return &p, nil
}

func (g *Gateway) log() *slog.Logger {
	if g.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return g.Log
}
