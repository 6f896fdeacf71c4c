package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
	"mcpx/internal/upstream"
)

// SignInStarter starts a sign-in to a server that the host's user
// completes in a browser, and returns its authorization URL (a running
// one's, if one is under way).
type SignInStarter interface {
	Begin(srv *config.Server) (string, error)
}

// PersonSignInStarter starts a principal's own sign-in to a per-person
// server, whose redirect comes back to the gateway's HTTP face, and
// returns the URL that starts it in the person's browser.
type PersonSignInStarter interface {
	Begin(ctx context.Context, srv *config.Server, principal string) (string, error)
}

// SetPersonSignIns lets the bridge hand a principal that a per-person
// server refused the link to their own sign-in: as a URL elicitation to a
// host that declared them, else in the call's tool error. Call it before
// the relay serves.
func (b *Bridge) SetPersonSignIns(s PersonSignInStarter) { b.personSignIns = s }

// SetSignIns lets the bridge ask a host that can open a URL (URL-mode
// elicitation) to have its user sign in, instead of failing a call to a
// server that needs a sign-in. Call it before the relay serves.
func (b *Bridge) SetSignIns(s SignInStarter) { b.signIns = s }

// signInElicitation answers a call that failed for want of a sign-in
// (err) for a host that declared URL-mode elicitation: a sign-in is
// started and the host asked to open its URL, as an upstream's own URL
// elicitation would be relayed (urlelicit.go): a legacy host gets -32042,
// a 2026-07-28 host input_required; its retry, once the user has signed
// in, reaches the server. ok is false when this does not apply: the call
// then fails with -31006, saying to run mcpx login.
func (b *Bridge) signInElicitation(c *relay.Call, err error) (res json.RawMessage, rerr error, ok bool) {
	if err == nil || (b.signIns == nil && b.personSignIns == nil) {
		// Before se, which errors.As moves to the heap: most calls
		// succeed. Saves an allocation a call (BenchmarkCallTool,
		// allocs/op).
		return nil, nil, false
	}
	var sn upstream.SignInNeeded
	if !errors.As(err, &sn) {
		return nil, nil, false
	}
	se := signInAsk{}
	se.Server, se.Reason, _ = sn.SignIn()
	if p, ok := sn.(personSignInNeeded); ok {
		se.Principal = p.SignInPrincipal()
	}
	if se.Principal != "" {
		return b.personSignIn(c, se)
	}
	if b.signIns == nil || c.Asker == nil || !c.Asker.Can(mcp.MethodElicitationCreate, json.RawMessage(`{"mode":"url"}`)) {
		return nil, nil, false
	}
	cfg := b.r.Config()
	if cfg == nil || cfg.Servers[se.Server] == nil {
		return nil, nil, false
	}
	u, berr := b.signIns.Begin(cfg.Servers[se.Server])
	if berr != nil {
		b.log.Warn("could not start a sign-in for the host", "server", se.Server, "err", berr)
		return nil, nil, false
	}
	return b.askToSignIn(c, se, u, fmt.Sprintf("Sign in to %s (%s). mcpx keeps the sign-in for every host on this machine; `mcpx login %s` does the same from a terminal.",
		se.Server, se.Reason, se.Server))
}

// personSignIn answers a call a per-person server refused for want of
// the caller's own sign-in (se): the link to it, as a URL elicitation
// when the host declared them, else in a tool error the user can follow;
// the host's retry after the sign-in reaches the server as the person.
func (b *Bridge) personSignIn(c *relay.Call, se signInAsk) (json.RawMessage, error, bool) {
	cfg := b.r.Config()
	if b.personSignIns == nil || cfg == nil || cfg.Servers[se.Server] == nil || se.Principal != c.Person {
		return nil, nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), personBeginWait)
	defer cancel()
	u, berr := b.personSignIns.Begin(ctx, cfg.Servers[se.Server], se.Principal)
	if berr != nil {
		b.log.Warn("could not start a person's sign-in", "server", se.Server, "principal", se.Principal, "err", berr)
		return nil, nil, false
	}
	msg := fmt.Sprintf("Sign in to %s with your own account (%s); mcpx keeps your sign-in for all your hosts.", se.Server, se.Reason)
	if c.Asker == nil || !c.Asker.Can(mcp.MethodElicitationCreate, json.RawMessage(`{"mode":"url"}`)) {
		b.log.Info("upstream needs a person's sign-in: the tool error carries the link", "server", se.Server, "principal", se.Principal)
		return toolError(fmt.Sprintf("upstream %q needs you to sign in to it with your own account (%s). Open this link in your browser, sign in, then call the tool again: %s",
			se.Server, se.Reason, u)), nil, true
	}
	return b.askToSignIn(c, se, u, msg)
}

// signInAsk is what an upstream's refusal for want of a sign-in names:
// the server, why, and for a per-person server the principal who must
// sign in as themself ("" for the server's shared sign-in).
type signInAsk struct{ Server, Reason, Principal string }

// personSignInNeeded is a per-person server's refusal: it names the
// principal who must sign in (oauth's SignInError does), known by this
// method, not by oauth's type.
type personSignInNeeded interface{ SignInPrincipal() string }

// personBeginWait bounds the discovery and registration a person's
// sign-in link waits for.
const personBeginWait = 30 * time.Second

// askToSignIn asks the host of c to have its user open u, the start of a
// sign-in, as a URL elicitation.
func (b *Bridge) askToSignIn(c *relay.Call, se signInAsk, u, message string) (res json.RawMessage, rerr error, ok bool) {
	el, perr := jsonrpc.ParseObject(jsonrpc.MustMarshal(map[string]any{
		"mode": "url", "elicitationId": "mcpx-sign-in-" + se.Server, "url": u, "message": message,
	}))
	if perr != nil {
		return nil, nil, false
	}
	b.log.Info("upstream needs a sign-in: asking the host to open its URL", "server", se.Server)
	if c.Holdable {
		res, rerr = b.urlInputRequired(c, []*jsonrpc.Object{el})
		return res, rerr, true
	}
	return nil, &jsonrpc.Error{
		Code:    mcp.CodeURLElicitationRequired,
		Message: fmt.Sprintf("upstream %q needs a sign-in: open the URL to sign in, then call again", se.Server),
		Data:    jsonrpc.MustMarshal(map[string]any{"elicitations": []json.RawMessage{el.Bytes()}}),
	}, true
}
