package authn

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
)

// header is a JWS protected header.
type header struct {
	Alg  string `json:"alg"`
	Kid  string `json:"kid"`
	Crit any    `json:"crit"`
}

// verifyJWT checks a JWT access token: its issuer, its signature by a key
// of that issuer, its audience and its times.
func (v *Verifier) verifyJWT(ctx context.Context, tok string) (Identity, error) {
	parts := strings.Split(tok, ".")
	var h header
	if err := decodePart(parts[0], &h); err != nil {
		return Identity{}, invalid("the token's header is not base64url JSON")
	}
	var c map[string]any
	if err := decodePart(parts[1], &c); err != nil {
		return Identity{}, invalid("the token's claims are not base64url JSON")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return Identity{}, invalid("the token's signature is not base64url")
	}
	if h.Crit != nil {
		return Identity{}, invalid("the token's header has critical extensions mcpx does not know")
	}
	if !algorithms[h.Alg] {
		return Identity{}, invalid("the token is signed with %q, not one of RS256, PS256, ES256, ES384", h.Alg)
	}
	issID, _ := c["iss"].(string)
	iss := v.issuers[issID]
	if iss == nil {
		return Identity{}, invalid("the token's issuer is not one mcpx takes tokens of")
	}
	keys, err := iss.keysFor(ctx, h.Kid)
	if err != nil {
		return Identity{}, err
	}
	signed := []byte(tok[:len(parts[0])+1+len(parts[1])])
	ok := false
	for _, k := range keys {
		if verifySig(h.Alg, k, signed, sig) {
			ok = true
			break
		}
	}
	if !ok {
		return Identity{}, invalid("the token's signature is not by a key of its issuer")
	}
	if !audience(c["aud"], v.o.Audience) {
		return Identity{}, invalid("the token is not for this resource: its audience (aud) does not name %s", v.o.Audience)
	}
	if err := v.o.timely(c, true); err != nil {
		return Identity{}, err
	}
	return v.o.identity(issID, c)
}

var algorithms = map[string]bool{"RS256": true, "PS256": true, "ES256": true, "ES384": true}

// decodePart decodes one base64url part of a JWS as JSON, numbers as
// float64.
func decodePart(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return err
	}
	return json.NewDecoder(bytes.NewReader(b)).Decode(v)
}

// verifySig reports whether sig signs signed by key under alg; a key of
// another type than alg's never verifies.
func verifySig(alg string, key crypto.PublicKey, signed, sig []byte) bool {
	switch alg {
	case "RS256", "PS256":
		k, ok := key.(*rsa.PublicKey)
		if !ok {
			return false
		}
		sum := sha256.Sum256(signed)
		if alg == "PS256" {
			return rsa.VerifyPSS(k, crypto.SHA256, sum[:], sig, nil) == nil
		}
		return rsa.VerifyPKCS1v15(k, crypto.SHA256, sum[:], sig) == nil
	case "ES256", "ES384":
		k, ok := key.(*ecdsa.PublicKey)
		if !ok {
			return false
		}
		size := 32
		var digest []byte
		if alg == "ES384" {
			size = 48
			sum := sha512.Sum384(signed)
			digest = sum[:]
		} else {
			sum := sha256.Sum256(signed)
			digest = sum[:]
		}
		if k.Curve.Params().BitSize != size*8 || len(sig) != 2*size {
			return false
		}
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		return ecdsa.Verify(k, digest, r, s)
	}
	return false
}
