// Package principal says who a request acts for, and what they may do.
//
// Who is decided once, at the face that received the request, and
// carried in its context (NewContext, From): the daemon's unix socket
// (mode 0600, its peers' credentials checked) is the local user, the
// daemon's operator (LocalUser); a request on the HTTP listener is its
// bearer token's holder, the default token one principal (DefaultToken),
// each named token another (NamedToken); a host on a stream (stdio, or
// handed to the daemon) is the local user too, but as a host, known by
// the clientInfo.name it sent for its policy (Host); a host speaking MCP
// over HTTP on the socket is SocketHost; a person signed in at an
// authorization server the config names (mcpx.auth) presenting its
// access token is a Person. Replicas sharing a store name the same token
// and the same person the same way. Nothing below the face reads a header or
// a token again.
//
// What is decided once, in the core, by Policy.Decide (policy.go; each
// refusal recorded in the audit log, audit.go), which
// every operation of every face goes through.
//
// A principal's ID is the owner its jobs are stored under ("local",
// "http", "http:NAME#fingerprint", "socket"), and its calls' owner in
// the daemon's registry.
package principal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
)

// IDs of the principals that have no name of their own.
const (
	// LocalID owns the local user's jobs: the CLI's, and those of every
	// host on a stream, which runs as the same user.
	LocalID = "local"
	// HTTPID is every holder of the default token (or, on a listener
	// that requires none, every HTTP host).
	HTTPID = "http"
	// SocketID is every host speaking MCP over HTTP on the unix socket.
	SocketID = "socket"
)

// Principal is who a request acts for. The zero Principal is no one:
// every operation is refused to it.
type Principal struct {
	id string
	// token is the name of the named token held, "" for none.
	token string
	// client is the clientInfo.name of the host, for its policy; hosts
	// choose it themselves, so it selects a policy, it proves nothing.
	client string
	// operator: the local user on the daemon's socket, who may see and
	// do everything of the daemon.
	operator bool
	// name and groups are a person's readable name and groups (joined
	// by NUL, so that a Principal stays comparable); see person.go.
	name, groups string
	// recorded: rebuilt from a stored job's record (Recorded).
	recorded bool
}

// LocalUser is the peer of the daemon's unix socket: the user that runs
// the daemon (the CLI, the local API, the live view it opens).
func LocalUser() Principal { return Principal{id: LocalID, operator: true} }

// Host is a host on a stream (stdio, or handed to the daemon over its
// socket): the local user, whose jobs it shares, but held to the policy
// of the host named client (its clientInfo.name; "" for none yet).
func Host(client string) Principal { return Principal{id: LocalID, client: client} }

// SocketHost is a host speaking MCP over HTTP on the daemon's socket.
func SocketHost() Principal { return Principal{id: SocketID} }

// DefaultToken is every holder of the default token of the HTTP
// listener, one principal.
func DefaultToken() Principal { return Principal{id: HTTPID} }

// NamedToken is the holder of the named token tok called name. Its ID
// carries a fingerprint of the token (32 bits of a SHA-256, which tell
// token generations apart in logs and reveal nothing of the token), so
// that a name revoked and minted again is another principal: jobs,
// sessions and sealed state of the old holder are not the new one's.
func NamedToken(name, tok string) Principal {
	sum := sha256.Sum256([]byte(tok))
	return Principal{id: HTTPID + ":" + name + "#" + hex.EncodeToString(sum[:4]), token: name}
}

// Bound is the principal whose ID a sign-in's state was bound to when
// the gateway made it: the principal of a browser's request to the
// sign-in pages, which carries no token, only that state. It is never
// the operator.
func Bound(id string) Principal { return Principal{id: id} }

// WithClient returns p known by the clientInfo.name client too, for its
// policy (a named token's name comes first).
func (p Principal) WithClient(client string) Principal {
	p.client = client
	return p
}

// ID names p as the owner of its jobs and calls.
func (p Principal) ID() string { return p.id }

// Token is the name of the named token p holds, "" for none.
func (p Principal) Token() string { return p.token }

// Client is the clientInfo.name p is known by, "" for none.
func (p Principal) Client() string { return p.client }

// Operator reports whether p is the local user on the daemon's socket.
func (p Principal) Operator() bool { return p.operator }

// IsZero reports whether p is no one.
func (p Principal) IsZero() bool { return p.id == "" }

func (p Principal) String() string {
	if p.operator {
		return "the local user"
	}
	return p.id
}

type ctxKey struct{}

// NewContext returns ctx carrying p, as the face decided it.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the principal ctx carries; the zero Principal (refused
// everything) if no face decided one.
func From(ctx context.Context) Principal {
	p, _ := ctx.Value(ctxKey{}).(Principal)
	return p
}
