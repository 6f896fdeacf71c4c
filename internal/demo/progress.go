package demo

import (
	"context"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// progress sends one call's notifications/progress, under the token the
// client sent (its exact bytes), with strictly increasing values, and only
// while the call may still talk (see [server.notify]). It is used by the
// call's own goroutine.
type progress struct {
	s    *server
	c    *call
	last float64
	sent int // notifications written
}

// report sends value, total (when positive; otherwise the total is unknown)
// and message. It reports whether the notification went out: not without a
// token, not if value does not exceed the last one sent, not once the call
// was cancelled or ended.
func (p *progress) report(value, total float64, message string) bool {
	if p.c.token == nil || p.sent > 0 && value <= p.last {
		return false
	}
	var params jsonrpc.Object
	params.Set(mcp.MetaProgressToken, p.c.token)
	params.Set("progress", marshal(value))
	if total > 0 {
		params.Set("total", marshal(total))
	}
	if message != "" {
		params.Set("message", marshal(message))
	}
	if !p.s.notify(p.c, jsonrpc.NewNotification(mcp.MethodProgress, params.Bytes())) {
		return false
	}
	p.last = value
	p.sent++
	if p.s.cfg.RecordProgress {
		p.s.record(Event{Event: EventProgress, ID: p.c.id.Raw(), Tool: p.c.tool, Progress: &value, Message: message})
	}
	return true
}

// sleep waits d, or until ctx is done and then returns its cause.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return context.Cause(ctx)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// seconds converts a duration argument (seconds, as a JSON number).
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
