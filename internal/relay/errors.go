package relay

import (
	"errors"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/upstream"
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
	var full *upstream.QueueFullError
	var signIn upstream.SignInNeeded
	var questions *QuestionLimitError
	switch c, isCause := CauseOf(err); {
	case errors.As(err, &full):
		return mk(mcp.CodeBusy, "upstream_busy", full.Error(), map[string]any{"server": full.Server, "reason": "input_full", "limitBytes": full.Limit})
	case errors.As(err, &signIn):
		server, reason, scopes := signIn.SignIn()
		extra := map[string]any{"login": "mcpx login " + server, "reason": reason}
		if len(scopes) > 0 {
			extra["scopes"] = scopes
		}
		return mk(mcp.CodeSignInRequired, "sign_in_required", signIn.Error(), extra)
	case errors.As(err, &busy):
		reason := "queue_timeout"
		if busy.Full {
			reason = "queue_full"
		}
		return mk(mcp.CodeBusy, "upstream_busy", busy.Error(), map[string]any{"server": busy.Server, "reason": reason,
			"limit": busy.Limits.MaxConcurrentCalls, "queueLength": busy.Limits.QueueLength, "waitedMs": busy.Waited.Milliseconds()})
	case errors.As(err, &questions):
		return mk(mcp.CodeUpstreamFailed, "question_limit", questions.Error(), map[string]any{"limit": questions.Limit, "inTotal": questions.InTotal})
	case errors.As(err, &hostLimit):
		return mk(mcp.CodeHostLimit, "host_limit", hostLimit.Error(), map[string]any{"limit": hostLimit.Limit})
	case isCause && (c.Kind == IdleTimeout || c.Kind == HardTimeout):
		return mk(mcp.CodeTimeout, c.Kind.String(), c.Error(), map[string]any{"afterMs": c.After.Milliseconds()})
	case isCause && c.Kind == UserInterrupt:
		return mk(mcp.CodeInterrupted, c.Kind.String(), c.Error(), nil)
	case isCause && c.Kind == Stopping, errors.Is(err, upstream.ErrClosed):
		return mk(mcp.CodeStopping, Stopping.String(), "mcpx is stopping", nil)
	case isCause:
		return mk(mcp.CodeInterrupted, c.Kind.String(), c.Error(), nil)
	case errors.As(err, &exit):
		return mk(mcp.CodeUpstreamFailed, "upstream_exited", exit.Error(), map[string]any{"server": exit.Server, "status": exit.Status})
	case errors.Is(err, upstream.ErrUnknownServer):
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Unknown tool: %v", err), "unknown_tool"
	default:
		return mk(mcp.CodeUpstreamFailed, "upstream_failed", err.Error(), nil)
	}
}
