package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// PageError is a sign-in page's refusal: the HTTP status and what the
// browser is told.
type PageError struct {
	Status int
	Msg    string
}

func (e *PageError) Error() string { return e.Msg }

var errUnknownSignIn = &PageError{Status: http.StatusNotFound, Msg: "no sign-in is waiting under this link: it expired or was used; call the tool again for a new one"}

// PageState returns the state a sign-in page's request carries: the
// start's s, the callback's state.
func PageState(r *http.Request) string {
	if r.URL.Path == StartPath {
		return r.URL.Query().Get("s")
	}
	return r.URL.Query().Get("state")
}

// Bound returns whom the pending sign-in under state is for, and to
// which server: the state is what authenticates a sign-in page's
// request, and this is the principal it acts for.
func (g *Gateway) Bound(ctx context.Context, state string) (principal, server string, err error) {
	if state == "" {
		return "", "", &PageError{Status: http.StatusBadRequest, Msg: "not a sign-in request: no state"}
	}
	blob, err := g.Pending.Blob(ctx, pendingName(state))
	if err != nil {
		return "", "", err
	}
	if len(blob) == 0 {
		return "", "", errUnknownSignIn
	}
	p, err := g.decode(state, blob)
	if err != nil {
		return "", "", errUnknownSignIn
	}
	return p.Principal, p.Server, nil
}

// take changes the pending sign-in under state with fn, under its lock,
// and returns it as fn left it.
func (g *Gateway) take(ctx context.Context, state string, fn func(p *pending) error) (*pending, error) {
	var out *pending
	err := g.Pending.UpdateBlob(ctx, pendingName(state), func(blob []byte) ([]byte, error) {
		if len(blob) == 0 {
			return nil, errUnknownSignIn
		}
		p, err := g.decode(state, blob)
		if err != nil {
			return nil, errUnknownSignIn
		}
		if time.Now().After(p.Expires) {
			return nil, &PageError{Status: http.StatusGone, Msg: "this sign-in link expired: call the tool again for a new one"}
		}
		if err := fn(p); err != nil {
			return nil, err
		}
		out = p
		return g.encode(state, p)
	})
	return out, err
}

// Start serves StartPath: once, it binds the browser to the sign-in (a
// cookie only the callback path is sent) and sends it to the
// authorization server.
func (g *Gateway) Start(w http.ResponseWriter, r *http.Request) error {
	state := PageState(r)
	p, err := g.take(r.Context(), state, func(p *pending) error {
		if p.Started {
			return &PageError{Status: http.StatusGone, Msg: "this sign-in link was opened already: call the tool again for a new one"}
		}
		p.Started = true
		return nil
	})
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: p.Binding, Path: CallbackPath, HttpOnly: true,
		Secure: strings.HasPrefix(p.Redirect, "https:"), SameSite: http.SameSiteLaxMode, MaxAge: int(g.ttl().Seconds())})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, p.AuthURL, http.StatusSeeOther)
	return nil
}

// Callback serves CallbackPath: the authorization server's redirect,
// taken once and only from the browser the start bound, whose code it
// exchanges for the principal's tokens.
func (g *Gateway) Callback(w http.ResponseWriter, r *http.Request) error {
	state := PageState(r)
	q := r.URL.Query()
	if q.Get("code") == "" && q.Get("error") == "" {
		return &PageError{Status: http.StatusBadRequest, Msg: "not an authorization response"}
	}
	cookie, cerr := r.Cookie(cookieName)
	p, err := g.take(r.Context(), state, func(p *pending) error {
		switch {
		case !p.Started || cerr != nil || !equalSecret(cookie.Value, p.Binding):
			return &PageError{Status: http.StatusForbidden, Msg: "refused: this sign-in response does not come from the browser that opened the sign-in link"}
		case p.Taken:
			return &PageError{Status: http.StatusConflict, Msg: "a sign-in response already arrived for this link"}
		}
		p.Taken = true
		return nil
	})
	if err != nil {
		return err
	}
	_ = g.Pending.DeleteBlob(r.Context(), pendingName(state))
	code, err := checkResponse(q, state, &p.Metadata)
	if err != nil {
		return &PageError{Status: http.StatusBadRequest, Msg: err.Error()}
	}
	rec, err := g.exchange(r.Context(), p, code)
	if err != nil {
		g.log().Warn("a per-person sign-in failed", "server", p.Server, "principal", p.Principal, "err", err)
		return &PageError{Status: http.StatusBadGateway, Msg: "mcpx could not complete the sign-in: " + err.Error()}
	}
	if err := g.Records.Save(r.Context(), rec); err != nil {
		return err
	}
	g.log().Info("signed in to the server as a person", "server", p.Server, "principal", p.Principal)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, err = fmt.Fprintf(w, "mcpx received the sign-in response and is signed in to %s for you. You can close this window and go back to your host.\n", p.Server)
	return err
}

func (g *Gateway) exchange(ctx context.Context, p *pending, code string) (*Record, error) {
	c := g.client()
	conf := oauthConfig(&p.Client, &p.Metadata, p.Redirect, p.Scopes)
	xctx := context.WithValue(ctx, oauth2.HTTPClient, c.limitedClient())
	tok, err := conf.Exchange(xctx, code, oauth2.VerifierOption(p.Verifier), oauth2.SetAuthURLParam("resource", p.Resource))
	if err != nil {
		return nil, fmt.Errorf("exchanging the authorization code at %s: %w", p.Metadata.TokenEndpoint, err)
	}
	if !strings.EqualFold(tok.Type(), "bearer") {
		return nil, errors.New("the token endpoint issued a non-bearer token; mcpx sends bearer tokens only")
	}
	now := time.Now()
	rec := &Record{Server: p.Server, ServerURL: p.ServerURL, Principal: p.Principal, Resource: p.Resource, Metadata: p.Metadata,
		Client: p.Client, Scopes: p.Scopes, SignedIn: now,
		Token: Token{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, Expiry: tok.Expiry, Obtained: now}}
	if s, ok := tok.Extra("scope").(string); ok {
		rec.Token.Scope = s
	}
	return rec, nil
}
