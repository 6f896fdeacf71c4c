package authn

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Defaults of Options.
const (
	DefaultLeeway           = 30 * time.Second
	DefaultRefetchEvery     = 10 * time.Second
	DefaultKeysMaxAge       = time.Hour
	DefaultIntrospectionTTL = 30 * time.Second
	DefaultCacheSize        = 10000
	// fetchTimeout bounds one request to an authorization server.
	fetchTimeout = 5 * time.Second
	// maxBody bounds what is read of an authorization server's answer.
	maxBody = 1 << 20
)

// Options configure a Verifier.
type Options struct {
	// Issuers are the issuer identifiers whose tokens are taken.
	Issuers []string
	// Audience is mcpx's resource URL: a token's aud must name it.
	Audience string
	// Scopes must all be in a token.
	Scopes []string
	// NameClaim and GroupsClaim name the claims of the readable name and
	// the groups.
	NameClaim, GroupsClaim string
	// IntrospectionURL, if set, checks opaque tokens, as ClientID with
	// ClientSecret.
	IntrospectionURL, ClientID, ClientSecret string
	// Client makes the requests to the authorization servers
	// (http.DefaultClient if nil).
	Client *http.Client
	Logger *slog.Logger
	// Leeway, RefetchEvery, KeysMaxAge, IntrospectionTTL, CacheSize: the
	// defaults above if 0.
	Leeway, RefetchEvery, KeysMaxAge, IntrospectionTTL time.Duration
	CacheSize                                          int
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

// Verifier checks tokens. Safe for concurrent use.
type Verifier struct {
	o       Options
	issuers map[string]*issuer
	intro   *introspector
}

// New returns a Verifier for o.
func New(o Options) *Verifier {
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.Leeway, DefaultLeeway)
	def(&o.RefetchEvery, DefaultRefetchEvery)
	def(&o.KeysMaxAge, DefaultKeysMaxAge)
	def(&o.IntrospectionTTL, DefaultIntrospectionTTL)
	if o.CacheSize <= 0 {
		o.CacheSize = DefaultCacheSize
	}
	v := &Verifier{o: o, issuers: map[string]*issuer{}}
	for _, iss := range o.Issuers {
		v.issuers[iss] = &issuer{id: iss, o: &v.o}
	}
	if o.IntrospectionURL != "" {
		v.intro = newIntrospector(&v.o)
	}
	return v
}

// Verify says who tok speaks for, or why it opens nothing (an *Error).
func (v *Verifier) Verify(ctx context.Context, tok string) (Identity, error) {
	if tok == "" {
		return Identity{}, invalid("no bearer token")
	}
	var id Identity
	var err error
	if strings.Count(tok, ".") == 2 {
		id, err = v.verifyJWT(ctx, tok)
	} else if v.intro != nil {
		id, err = v.intro.verify(ctx, tok)
	} else {
		return Identity{}, invalid("the token is not a JWT, and no introspection endpoint is configured")
	}
	if err != nil {
		return Identity{}, err
	}
	if missing := v.missingScopes(id.Scopes); len(missing) > 0 {
		return Identity{}, &Error{Kind: InsufficientScope, Why: "the token lacks the scope " + strings.Join(missing, " ")}
	}
	return id, nil
}

// missingScopes returns the required scopes not in have.
func (v *Verifier) missingScopes(have []string) []string {
	var out []string
	for _, s := range v.o.Scopes {
		if !slices.Contains(have, s) {
			out = append(out, s)
		}
	}
	return out
}

// Scopes returns the scopes a token must carry.
func (v *Verifier) Scopes() []string { return v.o.Scopes }

// identity reads an Identity from claims (a JWT's payload or an
// introspection answer).
func (o *Options) identity(iss string, c map[string]any) (Identity, error) {
	sub, _ := c["sub"].(string)
	if sub == "" {
		return Identity{}, invalid("the token names no subject (sub)")
	}
	id := Identity{Issuer: iss, Subject: sub}
	id.Name, _ = c[o.NameClaim].(string)
	if id.Name == "" {
		id.Name, _ = c["preferred_username"].(string)
	}
	if id.Name == "" {
		id.Name = sub
	}
	id.Groups = strs(c[o.GroupsClaim], false)
	id.Scopes = strs(c["scope"], true)
	if len(id.Scopes) == 0 {
		id.Scopes = strs(c["scp"], true)
	}
	if exp, ok := c["exp"].(float64); ok {
		id.Expiry = time.Unix(int64(exp), 0)
	}
	return id, nil
}

// strs reads a claim that is an array of strings or one string (split
// at spaces if split, as a scope claim is).
func strs(c any, split bool) []string {
	switch c := c.(type) {
	case string:
		if split {
			return strings.Fields(c)
		}
		if c == "" {
			return nil
		}
		return []string{c}
	case []any:
		var out []string
		for _, e := range c {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// audience reports whether an aud claim (a string or an array) names one
// of want.
func audience(aud any, want ...string) bool {
	for _, a := range strs(aud, false) {
		if slices.Contains(want, a) {
			return true
		}
	}
	return false
}

// timely checks exp (required if needExp) and nbf of claims at now.
func (o *Options) timely(c map[string]any, needExp bool) *Error {
	now := o.Now()
	exp, ok := c["exp"].(float64)
	switch {
	case !ok && needExp:
		return invalid("the token has no expiry (exp)")
	case ok && now.After(time.Unix(int64(exp), 0).Add(o.Leeway)):
		return invalid("the token has expired")
	}
	if nbf, ok := c["nbf"].(float64); ok && now.Add(o.Leeway).Before(time.Unix(int64(nbf), 0)) {
		return invalid("the token is not valid yet (nbf)")
	}
	return nil
}
