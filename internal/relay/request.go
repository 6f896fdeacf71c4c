package relay

import (
	"context"
	"encoding/json"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/upstream"
)

// Request is one request other than tools/call to relay to an upstream:
// resources/read, prompts/get, completion/complete, resources/subscribe.
type Request struct {
	Server string
	Method string
	// Params go upstream as they are, but for the revision's _meta stamp.
	Params *jsonrpc.Object
	// ClientCaps are the capabilities of the host request, for modern
	// upstreams; nil means none.
	ClientCaps json.RawMessage
	// OnProgress, when set, asks the upstream for progress under a fresh
	// token and receives each notification's params raw, on the reader
	// goroutine. It must not block.
	OnProgress func(params json.RawMessage)
	// OnMessage receives the log messages on the request's own upstream
	// stream (see upstream.StartOptions); nil leaves them to the pool.
	OnMessage func(*jsonrpc.Message)
	// LogLevel is a legacy host's level, for modern upstreams (see
	// upstream.StartOptions).
	LogLevel string
	// SessionKey is as Call's: "" uses the server's shared session.
	SessionKey string
	// Person is as Call's.
	Person string
}

// Send relays req and returns the upstream's raw result, or an error as
// CallTool's are. The server's hard maximum bounds it; no call slot is
// taken (the limits are for tool calls). When ctx ends first the request
// is cancelled upstream with ctx's cause as the reason.
func (r *Relay) Send(ctx context.Context, e *Entry, req Request) (json.RawMessage, error) {
	sess, err := r.pool.SessionAs(ctx, req.Server, req.SessionKey, req.Person)
	if err != nil {
		return nil, err
	}
	_, max := r.Timeouts(req.Server, 0, 0)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if max > 0 {
		hard := time.AfterFunc(max, func() { cancel(&Cause{Kind: HardTimeout, After: max}) })
		defer hard.Stop()
	}
	if req.Params == nil {
		req.Params = &jsonrpc.Object{}
	}
	up, err := sess.Start(req.Method, req.Params, req.ClientCaps, upstream.StartOptions{OnProgress: req.OnProgress, OnMessage: req.OnMessage, LogLevel: req.LogLevel})
	if err != nil {
		return nil, err
	}
	if e != nil {
		e.attach(req.Server, req.Method, up.ID)
	}
	select {
	case <-up.Done():
		return up.Result()
	case <-ctx.Done():
	}
	cause := context.Cause(ctx)
	select {
	case <-up.Done():
		return up.Result()
	default:
	}
	if sess.Cancel(up, Reason(cause)) {
		r.log.Info("cancelled upstream request", "server", req.Server, "method", req.Method, "upstreamId", up.ID, "reason", Reason(cause))
	}
	return nil, cause
}
