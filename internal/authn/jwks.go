package authn

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"
)

// issuer is one authorization server: its metadata's jwks_uri and the
// keys last fetched from it.
type issuer struct {
	id string
	o  *Options

	mu      sync.Mutex // held across a fetch: one fetch at a time
	jwksURI string
	keys    map[string]crypto.PublicKey // by kid ("" for a key with none)
	fetched time.Time                   // when keys were last fetched (zero: never)
	tried   time.Time                   // when a fetch was last tried
	lastErr error
}

// keysFor returns the keys a token naming kid may be signed with
// (every key if kid is ""), fetching the JWKS when it is not known yet,
// is older than KeysMaxAge, or lacks kid (at most once per
// RefetchEvery).
func (is *issuer) keysFor(ctx context.Context, kid string) ([]crypto.PublicKey, error) {
	is.mu.Lock()
	defer is.mu.Unlock()
	now := is.o.Now()
	_, known := is.keys[kid]
	if kid == "" {
		known = len(is.keys) > 0
	}
	stale := is.fetched.IsZero() || now.Sub(is.fetched) > is.o.KeysMaxAge
	if (stale || !known) && now.Sub(is.tried) >= is.o.RefetchEvery {
		is.tried = now
		if err := is.fetchLocked(ctx); err != nil {
			is.lastErr = err
			is.o.Logger.Warn("cannot fetch an authorization server's keys: tokens it issued are refused until it answers",
				"issuer", is.id, "err", err)
		} else {
			is.lastErr = nil
		}
	}
	if is.fetched.IsZero() || (is.lastErr != nil && now.Sub(is.fetched) > is.o.KeysMaxAge) {
		err := is.lastErr
		if err == nil {
			err = errors.New("its keys were asked for a moment ago")
		}
		return nil, unavailable(err, "cannot fetch the keys of the token's issuer %s", is.id)
	}
	if kid != "" {
		k, ok := is.keys[kid]
		switch {
		case !ok && is.lastErr != nil:
			return nil, unavailable(is.lastErr, "the token is signed by a key (kid) mcpx does not have, and cannot fetch the keys of its issuer %s", is.id)
		case !ok:
			return nil, invalid("the token is signed by a key (kid) its issuer does not publish")
		}
		return []crypto.PublicKey{k}, nil
	}
	out := make([]crypto.PublicKey, 0, len(is.keys))
	for _, k := range is.keys {
		out = append(out, k)
	}
	return out, nil
}

// fetchLocked discovers the jwks_uri (once) and fetches the keys.
func (is *issuer) fetchLocked(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	if is.jwksURI == "" {
		uri, err := is.discover(ctx)
		if err != nil {
			return err
		}
		is.jwksURI = uri
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := getJSON(ctx, is.o.Client, is.jwksURI, &set); err != nil {
		return fmt.Errorf("fetching the JWKS: %w", err)
	}
	keys := map[string]crypto.PublicKey{}
	for _, raw := range set.Keys {
		kid, k, err := parseJWK(raw)
		if err != nil {
			continue // a key of a kind mcpx does not use
		}
		keys[kid] = k
	}
	if len(keys) == 0 {
		return errors.New("the JWKS holds no RSA or EC signing key")
	}
	is.keys, is.fetched = keys, is.o.Now()
	return nil
}

// discover reads the issuer's metadata (OpenID Connect discovery, then
// RFC 8414), whose issuer must be this one's exactly.
func (is *issuer) discover(ctx context.Context) (string, error) {
	base := strings.TrimSuffix(is.id, "/")
	var errs []error
	for _, u := range metadataURLs(base) {
		var md struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := getJSON(ctx, is.o.Client, u, &md); err != nil {
			errs = append(errs, err)
			continue
		}
		if md.Issuer != is.id {
			return "", fmt.Errorf("the metadata at %s names the issuer %q, not %q", u, md.Issuer, is.id)
		}
		if md.JWKSURI == "" {
			return "", fmt.Errorf("the metadata at %s names no jwks_uri", u)
		}
		return md.JWKSURI, nil
	}
	return "", fmt.Errorf("reading the issuer's metadata: %w", errors.Join(errs...))
}

// metadataURLs are where an issuer's metadata may be: OpenID Connect's
// place, and RFC 8414's (the well-known part before the issuer's path).
func metadataURLs(base string) []string {
	out := []string{base + "/.well-known/openid-configuration"}
	if i := strings.Index(base, "://"); i >= 0 {
		if j := strings.Index(base[i+3:], "/"); j >= 0 {
			host, path := base[:i+3+j], base[i+3+j:]
			return append(out, host+"/.well-known/oauth-authorization-server"+path)
		}
	}
	return append(out, base+"/.well-known/oauth-authorization-server")
}

// getJSON GETs u and decodes its 200 answer.
func getJSON(ctx context.Context, c *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBody)).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// parseJWK reads a public signing key of a JWKS: RSA (2048 bits at
// least) or EC on P-256 or P-384.
func parseJWK(raw json.RawMessage) (string, crypto.PublicKey, error) {
	var k struct {
		Kty, Kid, Use, Crv, N, E, X, Y string
	}
	if err := json.Unmarshal(raw, &k); err != nil {
		return "", nil, err
	}
	if k.Use != "" && k.Use != "sig" {
		return "", nil, errors.New("not a signing key")
	}
	b := func(s string) []byte { d, _ := base64.RawURLEncoding.DecodeString(s); return d }
	switch k.Kty {
	case "RSA":
		n, e := new(big.Int).SetBytes(b(k.N)), new(big.Int).SetBytes(b(k.E))
		if n.BitLen() < 2048 || !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 {
			return "", nil, errors.New("a weak or malformed RSA key")
		}
		return k.Kid, &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
	case "EC":
		var curve elliptic.Curve
		switch k.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		default:
			return "", nil, errors.New("an unknown curve")
		}
		size := (curve.Params().BitSize + 7) / 8
		x, y := b(k.X), b(k.Y)
		if len(x) != size || len(y) != size {
			return "", nil, errors.New("a malformed EC key")
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
		if err != nil {
			return "", nil, err
		}
		return k.Kid, pub, nil
	}
	return "", nil, errors.New("an unknown key type")
}
