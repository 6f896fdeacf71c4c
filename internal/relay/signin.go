package relay

import (
	"encoding/json"
	"errors"
	"fmt"

	"mcpx/internal/config"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/upstream"
)

// SignInStarter starts a sign-in to a server that the host's user
// completes in a browser, and returns its authorization URL (a running
// one's, if one is under way).
type SignInStarter interface {
	Begin(srv *config.Server) (string, error)
}

// SetSignIns lets the relay ask a host that can open a URL (URL-mode
// elicitation) to have its user sign in, instead of failing a call to a
// server that needs a sign-in. Call it before the relay serves.
func (r *Relay) SetSignIns(s SignInStarter) { r.signIns = s }

// signInElicitation answers a call that failed for want of a sign-in
// (err) for a host that declared URL-mode elicitation: a sign-in is
// started and the host asked to open its URL, as an upstream's own URL
// elicitation would be relayed (urlelicit.go): a legacy host gets -32042,
// a 2026-07-28 host input_required; its retry, once the user has signed
// in, reaches the server. ok is false when this does not apply: the call
// then fails with -31006, saying to run mcpx login.
func (r *Relay) signInElicitation(c *Call, err error) (res json.RawMessage, rerr error, ok bool) {
	if err == nil || r.signIns == nil {
		// Before se, which errors.As moves to the heap: most calls
		// succeed. Saves an allocation a call (BenchmarkCallTool,
		// allocs/op).
		return nil, nil, false
	}
	var sn upstream.SignInNeeded
	if !errors.As(err, &sn) || c.Asker == nil ||
		!c.Asker.Can(mcp.MethodElicitationCreate, json.RawMessage(`{"mode":"url"}`)) {
		return nil, nil, false
	}
	server, reason, _ := sn.SignIn()
	cfg := r.cfg.Load()
	if cfg == nil || cfg.Servers[server] == nil {
		return nil, nil, false
	}
	u, berr := r.signIns.Begin(cfg.Servers[server])
	if berr != nil {
		r.log.Warn("could not start a sign-in for the host", "server", server, "err", berr)
		return nil, nil, false
	}
	el, perr := jsonrpc.ParseObject(jsonrpc.MustMarshal(map[string]any{
		"mode": "url", "elicitationId": "mcpx-sign-in-" + server, "url": u,
		"message": fmt.Sprintf("Sign in to %s (%s). mcpx keeps the sign-in for every host on this machine; `mcpx login %s` does the same from a terminal.",
			server, reason, server),
	}))
	if perr != nil {
		return nil, nil, false
	}
	r.log.Info("upstream needs a sign-in: asking the host to open its URL", "server", server)
	if c.Holdable {
		res, rerr = r.urlInputRequired(c, []*jsonrpc.Object{el})
		return res, rerr, true
	}
	return nil, &jsonrpc.Error{
		Code:    mcp.CodeURLElicitationRequired,
		Message: fmt.Sprintf("upstream %q needs a sign-in: open the URL to sign in, then call again", server),
		Data:    jsonrpc.MustMarshal(map[string]any{"elicitations": []json.RawMessage{el.Bytes()}}),
	}, true
}
