package authn

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// idp is an authorization server for the tests: discovery, a JWKS the
// test rotates, and an introspection endpoint.
type idp struct {
	srv   *httptest.Server
	mu    sync.Mutex
	keys  map[string]crypto.Signer // published, by kid
	jwks  atomic.Int32             // JWKS fetches
	down  atomic.Bool              // every endpoint answers 503
	intro map[string]map[string]any
}

func newIDP(t *testing.T) *idp {
	p := &idp{keys: map[string]crypto.Signer{}, intro: map[string]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		if p.down.Load() {
			w.WriteHeader(503)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"issuer": p.srv.URL, "jwks_uri": p.srv.URL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		p.jwks.Add(1)
		if p.down.Load() {
			w.WriteHeader(503)
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		var keys []map[string]string
		for kid, k := range p.keys {
			keys = append(keys, jwk(kid, k.Public()))
		}
		json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	})
	mux.HandleFunc("/introspect", func(w http.ResponseWriter, r *http.Request) {
		if p.down.Load() {
			w.WriteHeader(503)
			return
		}
		if id, secret, _ := r.BasicAuth(); id != "mcpx" || secret != "s3cret" {
			w.WriteHeader(401)
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		c, ok := p.intro[r.PostFormValue("token")]
		if !ok {
			c = map[string]any{"active": false}
		}
		json.NewEncoder(w).Encode(c)
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *idp) publish(kid string, k crypto.Signer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys[kid] = k
}

func (p *idp) retract(kid string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.keys, kid)
}

func jwk(kid string, pub crypto.PublicKey) map[string]string {
	b := func(x []byte) string { return base64.RawURLEncoding.EncodeToString(x) }
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "n": b(k.N.Bytes()), "e": b(big.NewInt(int64(k.E)).Bytes())}
	case *ecdsa.PublicKey:
		raw, _ := k.Bytes()
		size := (len(raw) - 1) / 2
		crv := map[int]string{32: "P-256", 48: "P-384"}[size]
		return map[string]string{"kty": "EC", "kid": kid, "crv": crv, "x": b(raw[1 : 1+size]), "y": b(raw[1+size:])}
	}
	panic("key type")
}

// sign mints a JWT of claims, signed by k as alg with kid.
func sign(t *testing.T, alg, kid string, k crypto.Signer, claims map[string]any) string {
	t.Helper()
	enc := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	signed := enc(map[string]string{"alg": alg, "kid": kid, "typ": "at+jwt"}) + "." + enc(claims)
	sum := sha256.Sum256([]byte(signed))
	var sig []byte
	var err error
	switch alg {
	case "RS256":
		sig, err = rsa.SignPKCS1v15(rand.Reader, k.(*rsa.PrivateKey), crypto.SHA256, sum[:])
	case "PS256":
		sig, err = rsa.SignPSS(rand.Reader, k.(*rsa.PrivateKey), crypto.SHA256, sum[:], nil)
	case "ES256":
		var r, s *big.Int
		r, s, err = ecdsa.Sign(rand.Reader, k.(*ecdsa.PrivateKey), sum[:])
		sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

const resource = "https://mcpx.example.com/mcp"

var (
	rsaKey, _  = rsa.GenerateKey(rand.Reader, 2048)
	rsaKey2, _ = rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _   = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
)

func (p *idp) claims(extra map[string]any) map[string]any {
	c := map[string]any{"iss": p.srv.URL, "sub": "u1", "aud": []string{resource, "other"}, "exp": time.Now().Add(time.Hour).Unix(),
		"iat": time.Now().Unix(), "name": "Ada", "groups": []string{"eng", "ops"}, "scope": "openid mcpx"}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func (p *idp) verifier(mod func(*Options)) *Verifier {
	o := Options{Issuers: []string{p.srv.URL}, Audience: resource, Scopes: []string{"mcpx"}, NameClaim: "name", GroupsClaim: "groups",
		IntrospectionURL: p.srv.URL + "/introspect", ClientID: "mcpx", ClientSecret: "s3cret"}
	if mod != nil {
		mod(&o)
	}
	return New(o)
}

func kindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

func TestJWT(t *testing.T) {
	p := newIDP(t)
	p.publish("r1", rsaKey)
	p.publish("e1", ecKey)
	v := p.verifier(nil)
	ctx := context.Background()
	for _, alg := range []struct {
		alg, kid string
		k        crypto.Signer
	}{{"RS256", "r1", rsaKey}, {"PS256", "r1", rsaKey}, {"ES256", "e1", ecKey}} {
		id, err := v.Verify(ctx, sign(t, alg.alg, alg.kid, alg.k, p.claims(nil)))
		if err != nil || id.Issuer != p.srv.URL || id.Subject != "u1" || id.Name != "Ada" || strings.Join(id.Groups, ",") != "eng,ops" {
			t.Errorf("%s: %+v, %v", alg.alg, id, err)
		}
	}
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	cases := []struct {
		name string
		tok  string
		kind Kind
		msg  string
	}{
		{"wrong audience", sign(t, "RS256", "r1", rsaKey, p.claims(map[string]any{"aud": "https://elsewhere.example.com/mcp"})), Invalid, "audience"},
		{"no audience", sign(t, "RS256", "r1", rsaKey, p.claims(map[string]any{"aud": nil})), Invalid, "audience"},
		{"wrong issuer", sign(t, "RS256", "r1", rsaKey, p.claims(map[string]any{"iss": other.URL})), Invalid, "issuer"},
		{"expired", sign(t, "RS256", "r1", rsaKey, p.claims(map[string]any{"exp": time.Now().Add(-time.Minute).Unix()})), Invalid, "expired"},
		{"no expiry", sign(t, "RS256", "r1", rsaKey, p.claims(map[string]any{"exp": nil})), Invalid, "no expiry"},
		{"not yet", sign(t, "RS256", "r1", rsaKey, p.claims(map[string]any{"nbf": time.Now().Add(time.Minute).Unix()})), Invalid, "not valid yet"},
		{"bad signature", sign(t, "RS256", "r1", rsaKey2, p.claims(nil)), Invalid, "signature"},
		{"key of another type", sign(t, "RS256", "e1", rsaKey, p.claims(nil)), Invalid, "signature"},
		{"alg none", strings.Join(strings.Split(sign(t, "RS256", "r1", rsaKey, p.claims(nil)), ".")[:2], ".") + ".", Invalid, ""},
		{"insufficient scope", sign(t, "RS256", "r1", rsaKey, p.claims(map[string]any{"scope": "openid"})), InsufficientScope, "mcpx"},
		{"no subject", sign(t, "RS256", "r1", rsaKey, p.claims(map[string]any{"sub": nil})), Invalid, "subject"},
	}
	// An unsigned token: alg none.
	enc := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	cases = append(cases, struct {
		name string
		tok  string
		kind Kind
		msg  string
	}{"alg none header", enc(map[string]string{"alg": "none"}) + "." + enc(p.claims(nil)) + ".", Invalid, "none"})
	for _, tc := range cases {
		_, err := v.Verify(ctx, tc.tok)
		if kindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v (kind %d), want kind %d saying %q", tc.name, err, kindOf(err), tc.kind, tc.msg)
		}
		if err != nil && strings.Contains(err.Error(), tc.tok) {
			t.Errorf("%s: the error quotes the token", tc.name)
		}
	}
}

// TestRotation: a token of a key the JWKS no longer has is refused once
// the JWKS is fetched again; a new key is fetched on its first token, and
// refetches are rate-limited.
func TestRotation(t *testing.T) {
	p := newIDP(t)
	p.publish("r1", rsaKey)
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	v := p.verifier(func(o *Options) { o.Now = clock; o.RefetchEvery = 10 * time.Second })
	ctx := context.Background()
	old := sign(t, "RS256", "r1", rsaKey, p.claims(nil))
	if _, err := v.Verify(ctx, old); err != nil {
		t.Fatal(err)
	}
	p.retract("r1")
	p.publish("r2", rsaKey2)
	advance(11 * time.Second)
	fresh := sign(t, "RS256", "r2", rsaKey2, p.claims(nil))
	if _, err := v.Verify(ctx, fresh); err != nil {
		t.Fatalf("a token of the new key: %v", err)
	}
	if _, err := v.Verify(ctx, old); kindOf(err) != Invalid || !strings.Contains(err.Error(), "does not publish") {
		t.Errorf("a token of the retired key: %v, want invalid", err)
	}
	n := p.jwks.Load()
	for range 5 {
		v.Verify(ctx, sign(t, "RS256", "r9", rsaKey, p.claims(nil)))
	}
	if got := p.jwks.Load(); got != n {
		t.Errorf("tokens of unknown keys fetched the JWKS %d times within the rate limit", got-n)
	}
	advance(11 * time.Second)
	v.Verify(ctx, sign(t, "RS256", "r9", rsaKey, p.claims(nil)))
	if got := p.jwks.Load(); got != n+1 {
		t.Errorf("after the rate limit: %d fetches, want 1", got-n)
	}
}

// TestKeysDown: an issuer whose keys cannot be fetched fails closed.
func TestKeysDown(t *testing.T) {
	p := newIDP(t)
	p.publish("r1", rsaKey)
	p.down.Store(true)
	v := p.verifier(nil)
	_, err := v.Verify(context.Background(), sign(t, "RS256", "r1", rsaKey, p.claims(nil)))
	if kindOf(err) != Unavailable {
		t.Errorf("keys down: %v, want unavailable", err)
	}
	// Keys fetched, then the JWKS goes down: a token of a key not fetched
	// cannot be told bad, and is refused as unavailable.
	p.down.Store(false)
	v = p.verifier(func(o *Options) { o.RefetchEvery = time.Nanosecond })
	if _, err := v.Verify(context.Background(), sign(t, "RS256", "r1", rsaKey, p.claims(nil))); err != nil {
		t.Fatal(err)
	}
	p.down.Store(true)
	_, err = v.Verify(context.Background(), sign(t, "RS256", "r2", rsaKey2, p.claims(nil)))
	if kindOf(err) != Unavailable {
		t.Errorf("an unknown kid while the JWKS is down: %v, want unavailable", err)
	}
}

func TestIntrospection(t *testing.T) {
	p := newIDP(t)
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	v := p.verifier(func(o *Options) { o.Now = clock; o.CacheSize = 2 })
	ctx := context.Background()
	p.intro["good"] = map[string]any{"active": true, "sub": "u2", "name": "Bo", "groups": "beta", "scope": "mcpx", "aud": "mcpx", "exp": float64(now.Add(time.Hour).Unix())}
	p.intro["scopeless"] = map[string]any{"active": true, "sub": "u2", "scope": "openid"}
	p.intro["elsewhere"] = map[string]any{"active": true, "sub": "u2", "scope": "mcpx", "aud": "someone-else"}
	p.intro["foreign"] = map[string]any{"active": true, "sub": "u2", "scope": "mcpx", "iss": "https://other.example.com"}
	p.intro["expired"] = map[string]any{"active": true, "sub": "u2", "scope": "mcpx", "exp": float64(now.Add(-time.Hour).Unix())}
	id, err := v.Verify(ctx, "good")
	if err != nil || id.Subject != "u2" || id.Issuer != p.srv.URL || id.Name != "Bo" || len(id.Groups) != 1 || id.Groups[0] != "beta" {
		t.Fatalf("good: %+v, %v", id, err)
	}
	for tok, kind := range map[string]Kind{"unknown": Invalid, "scopeless": InsufficientScope, "elsewhere": Invalid, "foreign": Invalid, "expired": Invalid} {
		if _, err := v.Verify(ctx, tok); kindOf(err) != kind {
			t.Errorf("%s: %v, want kind %d", tok, err, kind)
		}
	}
	// Kept: the endpoint down, a known good token still opens for the TTL.
	v2 := p.verifier(func(o *Options) { o.Now = clock })
	if _, err := v2.Verify(ctx, "good"); err != nil {
		t.Fatal(err)
	}
	p.down.Store(true)
	if _, err := v2.Verify(ctx, "good"); err != nil {
		t.Errorf("a token introspected a moment ago: %v", err)
	}
	mu.Lock()
	now = now.Add(DefaultIntrospectionTTL + time.Second)
	mu.Unlock()
	if _, err := v2.Verify(ctx, "good"); kindOf(err) != Unavailable {
		t.Errorf("endpoint down after the TTL: %v, want unavailable (fail closed)", err)
	}
	if _, err := v2.Verify(ctx, "never-seen"); kindOf(err) != Unavailable {
		t.Errorf("endpoint down, new token: %v, want unavailable", err)
	}
	if n := len(v.intro.cache); n > 2 {
		t.Errorf("the cache holds %d answers, more than its size 2", n)
	}
}

func TestNoIntrospection(t *testing.T) {
	p := newIDP(t)
	v := p.verifier(func(o *Options) { o.IntrospectionURL = "" })
	if _, err := v.Verify(context.Background(), "opaque"); kindOf(err) != Invalid {
		t.Errorf("an opaque token with no introspection: %v", err)
	}
}
