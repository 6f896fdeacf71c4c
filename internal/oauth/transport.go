package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// refreshAhead is how long before its expiry a token is refreshed.
const refreshAhead = time.Minute

// maxAuthorizations bounds the authorization flows one request may start
// inside the transport: the first sign-in and up to two step-ups (the
// spec's "no more than a few times").
const maxAuthorizations = 3

// SignInError is a server that needs the user to sign in (again, or with
// more scopes) before mcpx can reach it.
type SignInError struct {
	Server string
	Reason string
	Scopes []string // the scopes the server asked for, if it named any
}

func (e *SignInError) Error() string {
	return fmt.Sprintf("upstream %q needs a sign-in (%s): run `mcpx login %s`", e.Server, e.Reason, e.Server)
}

// Transport is the round tripper of one configured server's requests.
type Transport struct {
	Server   string
	URL      string // the configured URL: the token goes to its origin only
	Settings Settings
	Store    *Store
	Client   *Client
	Base     http.RoundTripper
	// Browser, when set, lets the transport run the authorization flow
	// itself when the server asks (headless sign-in: tests, the
	// conformance suite). Unset, such a request fails with a *SignInError.
	Browser Browser
	Log     *slog.Logger

	once   sync.Once
	origin *url.URL
	mu     sync.Mutex // the record and its refresh
	rec    *Record
	recMod time.Time
	login  sync.Mutex // one authorization flow at a time
}

func (t *Transport) init() {
	t.once.Do(func() {
		t.origin, _ = url.Parse(t.URL)
		if t.Log == nil {
			t.Log = slog.New(slog.DiscardHandler)
		}
	})
}

// current returns the stored record for this server (reloaded when its
// file changed: a `mcpx login` in another process), nil when there is none
// or it was made for another URL.
func (t *Transport) current() *Record {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.currentLocked()
}

func (t *Transport) currentLocked() *Record {
	mod := t.Store.modTime(t.Server)
	if mod.IsZero() {
		t.rec, t.recMod = nil, time.Time{}
		return nil
	}
	if t.rec == nil || !mod.Equal(t.recMod) {
		rec, err := t.Store.Load(t.Server)
		if err != nil {
			t.Log.Warn("cannot read the server's sign-in", "err", err)
			return nil
		}
		t.rec, t.recMod = rec, mod
	}
	if t.rec.ServerURL != t.URL {
		return nil // signed in to the server's old URL: not this one's token
	}
	return t.rec
}

// RoundTrip sends req with the server's token, when req goes to the
// server's origin and there is one.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.init()
	if t.origin == nil || !sameOrigin(req.URL, t.origin) {
		return t.Base.RoundTrip(req) // never a token to another origin
	}
	authorizations := 0
	refreshed := false
	for attempt := 0; ; attempt++ {
		rec := t.current()
		if rec != nil && !refreshed && rec.Token.RefreshToken != "" && !rec.Token.Expiry.IsZero() && time.Until(rec.Token.Expiry) < refreshAhead {
			refreshed = true
			var err error
			if rec, err = t.refresh(req.Context(), rec); err != nil {
				return nil, err
			}
		}
		out, err := t.prepare(req, attempt, rec)
		if err != nil {
			return nil, err
		}
		resp, err := t.Base.RoundTrip(out)
		if err != nil {
			return nil, err
		}
		ch, bearer := ParseChallenge(resp.Header)
		var why string
		switch {
		case resp.StatusCode == http.StatusUnauthorized && (bearer || rec != nil):
			if rec != nil && rec.Token.RefreshToken != "" && !refreshed {
				refreshed = true
				discard(resp)
				if _, err := t.refresh(req.Context(), rec); err != nil {
					return nil, err
				}
				continue
			}
			why = "not signed in"
			if rec != nil {
				why = "the server refused the stored token"
			}
		case resp.StatusCode == http.StatusForbidden && bearer && ch.Error == "insufficient_scope":
			if rec != nil && !missingScopes(rec, ch.Scopes) {
				// Asked again for what was just granted: another
				// authorization would end the same way.
				return resp, nil
			}
			why = "the server asks for more scopes: " + strings.Join(ch.Scopes, " ")
		default:
			return resp, nil
		}
		if t.Browser == nil || authorizations >= maxAuthorizations || (req.Body != nil && req.GetBody == nil) {
			discard(resp)
			if rec != nil && len(ch.Scopes) > 0 {
				t.remember(ch.Scopes)
			}
			return nil, &SignInError{Server: t.Server, Reason: why, Scopes: ch.Scopes}
		}
		discard(resp)
		authorizations++
		if err := t.authorize(req.Context(), &ch, rec); err != nil {
			return nil, err
		}
		refreshed = true // a fresh token: no refresh for this request
	}
}

// prepare returns the request to send: req itself the first time, a copy
// with a fresh body after that; with rec's token.
func (t *Transport) prepare(req *http.Request, attempt int, rec *Record) (*http.Request, error) {
	if attempt == 0 && rec == nil {
		return req, nil // unchanged: no copy (BenchmarkTransport/not-signed-in)
	}
	out := req.Clone(req.Context())
	if attempt > 0 && req.Body != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		out.Body = body
	}
	if rec != nil {
		out.Header.Set("Authorization", "Bearer "+rec.Token.AccessToken)
	}
	return out, nil
}

// missingScopes reports whether the challenge asks for a scope rec did
// not request.
func missingScopes(rec *Record, want []string) bool {
	for _, s := range want {
		if !slices.Contains(rec.Scopes, s) {
			return true
		}
	}
	return false
}

// refresh refreshes rec's token under the server's lock, unless another
// request or process already did (the file then holds a newer token).
func (t *Transport) refresh(ctx context.Context, rec *Record) (*Record, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	unlock, err := t.Store.lock(t.Server)
	if err != nil {
		return nil, fmt.Errorf("locking the sign-in of %q: %w", t.Server, err)
	}
	defer unlock()
	if cur := t.currentLocked(); cur != nil && cur.Token.AccessToken != rec.Token.AccessToken {
		return cur, nil
	}
	next := *rec
	if err := t.Client.Refresh(ctx, &next); err != nil {
		var te *TokenError
		if errors.As(err, &te) && te.Code == "invalid_grant" {
			return nil, &SignInError{Server: t.Server, Reason: "the sign-in expired and the refresh token was refused"}
		}
		return nil, err // a transient failure keeps the sign-in for the next try
	}
	if err := t.Store.Save(&next); err != nil {
		return nil, err
	}
	t.Log.Info("refreshed the server's access token", "expiry", next.Token.Expiry)
	t.rec, t.recMod = &next, t.Store.modTime(t.Server)
	return &next, nil
}

// remember adds the scopes a server asked for to the stored sign-in's, so
// that the next sign-in (mcpx login, or one a host is asked to complete)
// requests them with the ones granted before: a step-up done by the user.
func (t *Transport) remember(scopes []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	unlock, err := t.Store.lock(t.Server)
	if err != nil {
		return
	}
	defer unlock()
	cur := t.currentLocked()
	if cur == nil || !missingScopes(cur, scopes) {
		return
	}
	next := *cur
	next.Scopes = slices.Clone(cur.Scopes)
	for _, s := range scopes {
		if !slices.Contains(next.Scopes, s) {
			next.Scopes = append(next.Scopes, s)
		}
	}
	if err := t.Store.Save(&next); err != nil {
		t.Log.Warn("cannot note the scopes the server asked for", "err", err)
		return
	}
	t.rec, t.recMod = &next, t.Store.modTime(t.Server)
}

// authorize runs the authorization flow for ch and stores the result.
func (t *Transport) authorize(ctx context.Context, ch *Challenge, prev *Record) error {
	t.login.Lock()
	defer t.login.Unlock()
	if cur := t.current(); cur != nil && (prev == nil || cur.Token.AccessToken != prev.Token.AccessToken) {
		return nil // signed in meanwhile
	}
	rec, err := t.Client.SignIn(ctx, LoginRequest{Server: t.Server, URL: t.URL, Settings: t.Settings, Challenge: ch, Previous: prev, Browser: t.Browser}, t.Store.Save)
	if err != nil {
		return fmt.Errorf("signing in to %q: %w", t.Server, err)
	}
	t.Log.Info("signed in to the server", "scopes", rec.Scopes, "expiry", rec.Token.Expiry)
	return nil
}

func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// SignInRequired marks the error for packages that cannot name its type.
func (e *SignInError) SignInRequired() bool { return true }
