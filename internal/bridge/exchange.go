package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/relay"
	"mcpx/internal/upstream"
)

// TokenExchanger gets a person's token of a per-person server by
// exchanging their own access token (RFC 8693) and keeps it as their
// sign-in to it (oauth.Exchanger).
type TokenExchanger interface {
	Exchange(ctx context.Context, srv *config.Server, principal, subject string) error
}

// SetTokenExchanger lets a person that a per-person server configured
// with oauth.tokenExchange refused for want of a sign-in get one without
// a browser step. Call it before the relay serves.
func (b *Bridge) SetTokenExchanger(x TokenExchanger) { b.exchanger = x }

// exchangeWait bounds a token exchange.
const exchangeWait = 30 * time.Second

// exchangeAndRetry answers a call that a per-person server with a token
// exchange refused for want of the person's sign-in (err): the person's
// access token is exchanged for one of the server, kept as their sign-in,
// and the call sent again, once. ok is false when this does not apply (no
// exchange configured, not a person's call, another error): the call goes
// on as before, to the browser's sign-in. A failed exchange, or a server
// that refuses the exchanged token, answers with a tool error saying
// why, unless the server allows the browser's sign-in as a fallback
// (signInFallback): then ok is false and the person gets its link.
func (b *Bridge) exchangeAndRetry(ctx context.Context, e *relay.Entry, c *relay.Call, err error) (json.RawMessage, error, bool) {
	if err == nil || b.exchanger == nil {
		return nil, nil, false
	}
	var sn upstream.SignInNeeded
	if !errors.As(err, &sn) {
		return nil, nil, false
	}
	pn, ok := sn.(personSignInNeeded)
	if !ok || pn.SignInPrincipal() == "" || pn.SignInPrincipal() != c.Person {
		return nil, nil, false
	}
	server, _, _ := sn.SignIn()
	cfg := b.r.Config()
	if cfg == nil || cfg.Servers[server] == nil || cfg.Servers[server].OAuth == nil || cfg.Servers[server].OAuth.TokenExchange == nil {
		return nil, nil, false
	}
	srv := cfg.Servers[server]
	fallback := srv.OAuth.TokenExchange.SignInFallback
	if c.Subject == "" {
		// Not a person signed in with an access token (a named token,
		// the local user): nothing to exchange; the browser's sign-in.
		return nil, nil, false
	}
	xctx, cancel := context.WithTimeout(ctx, exchangeWait)
	xerr := b.exchanger.Exchange(xctx, srv, c.Person, c.Subject)
	cancel()
	if xerr != nil {
		b.log.Warn("token exchange failed", "server", server, "principal", c.Person, "err", xerr, "fallback", fallback)
		if fallback {
			return nil, nil, false
		}
		return toolError(fmt.Sprintf("upstream %q: %v. mcpx could not get you a token of it without a browser sign-in; ask the operator to check the server's oauth.tokenExchange.", server, xerr)), nil, true
	}
	b.log.Info("token exchanged for a person's sign-in", "server", server, "principal", c.Person)
	res, err := b.call(ctx, e, *c, false)
	if err != nil && errors.As(err, &sn) && !fallback {
		return toolError(fmt.Sprintf("upstream %q refused the token mcpx got for you by token exchange (%v); it may not trust the identity provider's exchanged tokens.", server, err)), nil, true
	}
	return res, err, true
}
