package relay

import (
	"errors"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/oauth"
	"mcpx/internal/upstream"
)

// Error codes of failures that happen in mcpx rather than in an upstream.
// They lie outside JSON-RPC's reserved range, so no host mistakes them for
// an upstream's own.
const (
	CodeUpstreamFailed = -31000                 // the upstream could not start, or died during the call
	CodeTimeout        = -31001                 // an mcpx timer ended the call
	CodeStopping       = -31002                 // mcpx is shutting down
	CodeInterrupted    = -31003                 // a person interrupted the call
	CodeBusy           = -31004                 // the upstream's call slots and queue left no room (*BusyError)
	CodeHostLimit      = -31005                 // the host has as many requests in flight as it may (*HostLimitError)
	CodeSignInRequired = mcp.CodeSignInRequired // the upstream needs a sign-in (*oauth.SignInError)
)

// RPCError turns why a call to server failed into the JSON-RPC error a host
// sees: the upstream's own error unchanged, or an mcpx error whose data
// says {"mcpx":{"kind":...}}. kind names the cause for the local API.
func RPCError(err error, server string) (rpcErr *jsonrpc.Error, kind string) {
	var start *upstream.StartError
	if errors.As(err, &rpcErr) && !errors.As(err, &start) {
		return rpcErr, "upstream_error"
	}
	data := func(kind string, extra map[string]any) []byte {
		d := map[string]any{"kind": kind}
		if server != "" {
			d["server"] = server
		}
		for k, v := range extra {
			d[k] = v
		}
		return jsonrpc.MustMarshal(map[string]any{"mcpx": d})
	}
	mk := func(code int64, kind, msg string, extra map[string]any) (*jsonrpc.Error, string) {
		return &jsonrpc.Error{Code: code, Message: "mcpx: " + msg, Data: data(kind, extra)}, kind
	}
	var exit *upstream.ExitError
	var busy *BusyError
	var hostLimit *HostLimitError
	var signIn *oauth.SignInError
	switch c, isCause := CauseOf(err); {
	case errors.As(err, &signIn):
		extra := map[string]any{"login": "mcpx login " + signIn.Server, "reason": signIn.Reason}
		if len(signIn.Scopes) > 0 {
			extra["scopes"] = signIn.Scopes
		}
		return mk(CodeSignInRequired, "sign_in_required", signIn.Error(), extra)
	case errors.As(err, &busy):
		reason := "queue_timeout"
		if busy.Full {
			reason = "queue_full"
		}
		return mk(CodeBusy, "upstream_busy", busy.Error(), map[string]any{"server": busy.Server, "reason": reason,
			"limit": busy.Limits.MaxConcurrentCalls, "queueLength": busy.Limits.QueueLength, "waitedMs": busy.Waited.Milliseconds()})
	case errors.As(err, &hostLimit):
		return mk(CodeHostLimit, "host_limit", hostLimit.Error(), map[string]any{"limit": hostLimit.Limit})
	case isCause && (c.Kind == IdleTimeout || c.Kind == HardTimeout):
		return mk(CodeTimeout, c.Kind.String(), c.Error(), map[string]any{"afterMs": c.After.Milliseconds()})
	case isCause && c.Kind == UserInterrupt:
		return mk(CodeInterrupted, c.Kind.String(), c.Error(), nil)
	case isCause && c.Kind == Stopping, errors.Is(err, upstream.ErrClosed):
		return mk(CodeStopping, Stopping.String(), "mcpx is stopping", nil)
	case isCause:
		return mk(CodeInterrupted, c.Kind.String(), c.Error(), nil)
	case errors.As(err, &exit):
		return mk(CodeUpstreamFailed, "upstream_exited", exit.Error(), map[string]any{"server": exit.Server, "status": exit.Status})
	case errors.Is(err, upstream.ErrUnknownServer):
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Unknown tool: %v", err), "unknown_tool"
	default:
		return mk(CodeUpstreamFailed, "upstream_failed", err.Error(), nil)
	}
}
