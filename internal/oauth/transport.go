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
	// Principal is, for a per-person server, the ID of the principal who
	// must sign in as themself; "" for the server's shared sign-in.
	Principal string
}

func (e *SignInError) Error() string {
	if e.Principal != "" {
		return fmt.Sprintf("upstream %q needs you to sign in to it with your own account (%s): call one of its tools from a host that can open a URL (URL-mode elicitation), or follow the link mcpx gives", e.Server, e.Reason)
	}
	return fmt.Sprintf("upstream %q needs a sign-in (%s): run `mcpx login %s`", e.Server, e.Reason, e.Server)
}

// Transport is the round tripper of one configured server's requests.
type Transport struct {
	Server string
	// Principal is, on a per-person server, the ID of the principal whose
	// own sign-in the transport sends; "" sends the server's shared one.
	Principal string
	URL       string // the configured URL: the token goes to its origin only
	Settings  Settings
	Store     Records
	Client    *Client
	Base      http.RoundTripper
	// Browser, when set, lets the transport run the authorization flow
	// itself when the server asks (headless sign-in: tests, the
	// conformance suite). Unset, such a request fails with a *SignInError.
	Browser Browser
	Log     *slog.Logger

	once   sync.Once
	origin *url.URL
	mu     sync.Mutex // one refresh at a time in this process
	login  sync.Mutex // one authorization flow at a time

	warnMu     sync.Mutex
	lastWarned string // the last read error logged: each is logged once, not once a request
}

func (t *Transport) init() {
	t.once.Do(func() {
		t.origin, _ = url.Parse(t.URL)
		if t.Log == nil {
			t.Log = slog.New(slog.DiscardHandler)
		}
	})
}

// current returns the stored record for this server (a `mcpx login` in
// another process is seen: see [Records]), nil when there is none or it
// was made for another URL; err says why one could not be read.
func (t *Transport) current(ctx context.Context) (*Record, error) {
	rec, err := t.Store.Load(ctx, t.key())
	t.noteReadError(err)
	if errors.Is(err, ErrNoRecord) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if rec.ServerURL != t.URL {
		return nil, nil // signed in to the server's old URL: not this one's token
	}
	return rec, nil
}

// noteReadError logs a sign-in that cannot be read (a wrong key, a store
// that went away) when the reason is new, not on every request; a read
// that works again (or finds no record) is logged once too.
func (t *Transport) noteReadError(err error) {
	why := ""
	if err != nil && !errors.Is(err, ErrNoRecord) {
		why = err.Error()
	}
	t.warnMu.Lock()
	last := t.lastWarned
	t.lastWarned = why
	t.warnMu.Unlock()
	switch {
	case why == last:
	case why != "":
		t.Log.Warn("cannot read the server's sign-in", "err", err)
	default:
		t.Log.Info("the server's sign-in can be read again")
	}
}

// RoundTrip sends req with the server's token, when req goes to the
// server's origin and there is one.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.init()
	if t.origin == nil || !sameOrigin(req.URL, t.origin) {
		return t.Base.RoundTrip(req) // never a token to another origin
	}
	authorizations := 0
	refreshed, reread := false, false
	var fresh *Record // the record a refresh returned, for the next attempt
	for attempt := 0; ; attempt++ {
		rec, loadErr := fresh, error(nil)
		if rec == nil {
			rec, loadErr = t.current(req.Context())
		}
		fresh = nil
		var ended *SignInError
		if rec != nil && rec.Refused != nil {
			// The sign-in ended: its token goes nowhere.
			ended = &SignInError{Server: t.Server, Reason: rec.Refused.Reason, Principal: t.Principal}
			rec = nil
		}
		if rec != nil && !refreshed && rec.Token.RefreshToken != "" && !rec.Token.Expiry.IsZero() && !time.Now().Before(rec.Token.due(refreshAhead)) {
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
				var err error
				if fresh, err = t.refresh(req.Context(), rec); err != nil {
					return nil, err
				}
				continue
			}
			if rec == nil && !reread {
				// Records may answer from a cache: a sign-in made a
				// moment ago elsewhere is read afresh before giving up.
				reread = true
				if cur := t.reread(req.Context()); cur != nil {
					discard(resp)
					fresh = cur
					continue
				}
			}
			why = "not signed in"
			if ended != nil {
				why = ended.Reason
			}
			if loadErr != nil {
				why = "the stored sign-in cannot be read: " + loadErr.Error()
			}
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
				t.remember(req.Context(), ch.Scopes)
			}
			return nil, &SignInError{Server: t.Server, Reason: why, Scopes: ch.Scopes, Principal: t.Principal}
		}
		discard(resp)
		authorizations++
		if err := t.authorize(req.Context(), &ch, rec); err != nil {
			return nil, err
		}
		refreshed = true // a fresh token: no refresh for this request
	}
}

// reread reads the server's record afresh (under its lock), nil when
// there is none usable.
func (t *Transport) reread(ctx context.Context) *Record {
	cur, err := t.Store.Update(ctx, t.key(), func(*Record) (*Record, error) { return nil, nil })
	if err != nil || cur == nil || cur.ServerURL != t.URL || cur.Refused != nil {
		return nil
	}
	return cur
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

// refresh refreshes rec's token, unless another request or process
// already did (see refreshRecord).
func (t *Transport) refresh(ctx context.Context, rec *Record) (*Record, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	next, did, err := refreshRecord(ctx, t.Store, t.Client, t.Server, t.Principal, t.URL, func(cur *Record) bool {
		return cur.Token.AccessToken == rec.Token.AccessToken
	})
	if err != nil {
		return nil, err
	}
	if did {
		t.Log.Info("refreshed the server's access token", "expiry", next.Token.Expiry)
	} else {
		t.Log.Info("the server's access token was refreshed by another request or gateway")
	}
	return next, nil
}

// remember adds the scopes a server asked for to the stored sign-in's, so
// that the next sign-in (mcpx login, or one a host is asked to complete)
// requests them with the ones granted before: a step-up done by the user.
func (t *Transport) remember(ctx context.Context, scopes []string) {
	_, err := t.Store.Update(ctx, t.key(), func(cur *Record) (*Record, error) {
		if cur == nil || cur.ServerURL != t.URL || !missingScopes(cur, scopes) {
			return nil, nil
		}
		next := *cur
		next.Scopes = slices.Clone(cur.Scopes)
		for _, s := range scopes {
			if !slices.Contains(next.Scopes, s) {
				next.Scopes = append(next.Scopes, s)
			}
		}
		return &next, nil
	})
	if err != nil {
		t.Log.Warn("cannot note the scopes the server asked for", "err", err)
	}
}

// authorize runs the authorization flow for ch and stores the result.
func (t *Transport) authorize(ctx context.Context, ch *Challenge, prev *Record) error {
	t.login.Lock()
	defer t.login.Unlock()
	if cur, _ := t.current(ctx); cur != nil && cur.Refused == nil && (prev == nil || cur.Token.AccessToken != prev.Token.AccessToken) {
		return nil // signed in meanwhile
	}
	rec, err := t.Client.SignIn(ctx, LoginRequest{Server: t.Server, URL: t.URL, Settings: t.Settings, Challenge: ch, Previous: prev, Browser: t.Browser},
		func(r *Record) error { return t.Store.Save(ctx, r) })
	if err != nil {
		return fmt.Errorf("signing in to %q: %w", t.Server, err)
	}
	t.Log.Info("signed in to the server", "scopes", rec.Scopes, "expiry", rec.Token.Expiry)
	return nil
}

// key is where the transport's record is kept.
func (t *Transport) key() string { return PersonKey(t.Server, t.Principal) }

func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// SignIn says who needs a sign-in and why, for packages that name the
// error by this method (upstream.SignInNeeded) rather than by its type.
func (e *SignInError) SignIn() (server, reason string, scopes []string) {
	return e.Server, e.Reason, e.Scopes
}

// SignInPrincipal names the principal who must sign in as themself to a
// per-person server, "" for the server's shared sign-in.
func (e *SignInError) SignInPrincipal() string { return e.Principal }
