// Package authn checks the access tokens people present to mcpx's HTTP
// face, as an OAuth 2.1 resource server does (MCP authorization,
// RFC 9728, RFC 8707, RFC 7662): it says who a token's holder is, or why
// the token opens nothing. It decides no policy (package principal does)
// and reads no request (the face hands it the bearer token).
//
// The contracts:
//
//   - A JWT is taken only if it is signed (RS256, PS256, ES256 or ES384)
//     by a key of the JWKS its issuer's metadata names, its iss is one of
//     the configured issuers exactly, its aud names mcpx's resource URL,
//     and it is within exp and nbf (allowing Leeway of clock skew).
//   - Keys are fetched once and kept; a token naming a key id the JWKS
//     lacks makes it fetch again (a rotation), at most once per
//     RefetchEvery per issuer; a key id still unknown is a bad token.
//   - A token that is not a JWT is asked about at the introspection
//     endpoint, if one is configured (else it opens nothing); answers are
//     kept for at most IntrospectionTTL (never past the token's expiry),
//     in a cache of bounded size.
//   - Nothing fails open: metadata, keys or an introspection endpoint that
//     cannot be reached make Verify return an *Error of kind Unavailable
//     (the face answers 503), never an identity.
//   - A token is never logged or put in an error.
package authn

import (
	"fmt"
	"time"
)

// Identity is who a valid token speaks for.
type Identity struct {
	// Issuer and Subject name the person: the pair is theirs alone.
	Issuer, Subject string
	// Name is their readable name (the configured claim, else
	// preferred_username, else the subject).
	Name string
	// Groups are the values of the configured groups claim.
	Groups []string
	// Scopes are the token's scopes.
	Scopes []string
	// Expiry is when the token ends (zero: unknown).
	Expiry time.Time
}

// Kind is why a token was refused.
type Kind int

const (
	// Invalid: the token opens nothing (401, error="invalid_token").
	Invalid Kind = iota + 1
	// InsufficientScope: the token is good but lacks a required scope
	// (403, error="insufficient_scope").
	InsufficientScope
	// Unavailable: whether the token is good cannot be told now (the
	// issuer's keys or the introspection endpoint are out of reach): 503.
	Unavailable
)

// Error is why Verify refused a token. Its text never quotes the token.
type Error struct {
	Kind Kind
	Why  string
	Err  error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Why + ": " + e.Err.Error()
	}
	return e.Why
}

func (e *Error) Unwrap() error { return e.Err }

func invalid(format string, args ...any) *Error {
	return &Error{Kind: Invalid, Why: fmt.Sprintf(format, args...)}
}

func unavailable(err error, format string, args ...any) *Error {
	return &Error{Kind: Unavailable, Why: fmt.Sprintf(format, args...), Err: err}
}
