package demo

import (
	"context"
	"encoding/json"
	"slices"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// A 2026-07-28 client subscribes to resources through subscriptions/listen
// (there is no resources/subscribe in that revision). The surface honors
// resourceSubscriptions only: the acknowledgement names those URIs and no
// other type, every update the touch tool makes for one of them goes on
// the listen's own stream tagged with its id, and the listen lasts until
// the client cancels it (notifications/cancelled on stdio, the end of the
// request's stream over HTTP).

// demoListen is one subscriptions/listen in progress.
type demoListen struct {
	c    *call
	uris []string
	end  chan struct{} // closed when the server ends it (the touch tool's endListens)
}

// listen serves subscriptions/listen until ctx ends.
func (s *server) listen(ctx context.Context, c *call, req *request) (json.RawMessage, error) {
	var p struct {
		Notifications *struct {
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
	}
	if json.Unmarshal(req.msg.Params, &p) != nil || p.Notifications == nil {
		return nil, invalidParams("subscriptions/listen needs a notifications filter")
	}
	uris := p.Notifications.ResourceSubscriptions
	honored := map[string]any{}
	if uris != nil {
		honored["resourceSubscriptions"] = uris
	}
	meta := map[string]json.RawMessage{mcp.MetaSubscriptionID: c.id.Raw()}
	l := &demoListen{c: c, uris: uris, end: make(chan struct{})}
	// Registered before the acknowledgement: a client that acts on the
	// acknowledgement at once must find its subscription in place.
	s.mu.Lock()
	if s.listens == nil {
		s.listens = map[*demoListen]bool{}
	}
	s.listens[l] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listens, l)
		s.mu.Unlock()
	}()
	s.notify(c, jsonrpc.NewNotification(mcp.MethodSubscriptionsAcknowledged, marshal(map[string]any{"_meta": meta, "notifications": honored})))
	select {
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-l.end:
	}
	// The server tears the listen down: on stdio by notifications/cancelled
	// naming it, over HTTP by answering it, which ends its stream.
	if c.hdr != nil {
		return json.RawMessage(`{}`), nil
	}
	s.notify(c, jsonrpc.NewNotification(mcp.MethodCancelled, marshal(map[string]any{"requestId": c.id.Raw(), "reason": "the demo ended its listens"})))
	return nil, errIgnored
}

// endListensLocked ends every listen. The caller holds s.mu.
func (s *server) endListensLocked() int {
	n := 0
	for l := range s.listens {
		select {
		case <-l.end:
		default:
			close(l.end)
			n++
		}
	}
	return n
}

// listensForLocked returns the listens subscribed to uri. The caller holds s.mu.
func (s *server) listensForLocked(uri string) []*demoListen {
	var out []*demoListen
	for l := range s.listens {
		if slices.Contains(l.uris, uri) {
			out = append(out, l)
		}
	}
	return out
}

// updated tells listen l that uri was updated.
func (s *server) updated(l *demoListen, uri string) bool {
	meta := map[string]json.RawMessage{mcp.MetaSubscriptionID: l.c.id.Raw()}
	return s.notify(l.c, jsonrpc.NewNotification(mcp.MethodResourcesUpdated, marshal(map[string]any{"_meta": meta, "uri": uri})))
}
