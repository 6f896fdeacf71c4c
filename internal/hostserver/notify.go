package hostserver

import (
	"context"
	"encoding/json"
	"sync"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// watchers are the hosts to tell when the tool list changes: legacy
// sessions with a stream of their own (notifications/tools/list_changed on
// the stdio connection, or on a legacy HTTP session's standalone GET
// stream, as their tools.listChanged capability promised) and 2026-07-28
// subscriptions/listen requests that asked for toolsListChanged (tagged
// with their subscription id). A legacy HTTP session with no GET stream
// open has nowhere to be told, and re-lists on its own.
type watchers struct {
	mu      sync.Mutex
	legacy  map[*hostSession]sink
	listens map[*listen]struct{}
}

// listen is one subscriptions/listen request in progress.
type listen struct {
	id   jsonrpc.ID
	sink sink
	live func() bool
}

// ToolsChanged tells every watching host that the tool list changed. It
// never blocks (it only queues); the pool calls it from upstream readers.
func (s *Server) ToolsChanged() {
	w := &s.watch
	w.mu.Lock()
	legacy := make([]sink, 0, len(w.legacy))
	for _, out := range w.legacy {
		legacy = append(legacy, out)
	}
	listens := make([]*listen, 0, len(w.listens))
	for l := range w.listens {
		listens = append(listens, l)
	}
	w.mu.Unlock()
	plain := jsonrpc.NewNotification(mcp.MethodToolsListChanged, nil).Encode()
	for _, out := range legacy {
		out.pushWhile(nil, plain)
	}
	for _, l := range listens {
		l.sink.pushWhile(l.live, jsonrpc.NewNotification(mcp.MethodToolsListChanged, subscriptionMeta(l.id, nil)).Encode())
	}
	s.log.Info("told hosts the tool list changed", "legacySessions", len(legacy), "listens", len(listens))
}

// subscriptionMeta is notification params tagged with a listen's id, plus
// extra members.
func subscriptionMeta(id jsonrpc.ID, extra map[string]json.RawMessage) json.RawMessage {
	meta := &jsonrpc.Object{}
	meta.Set(mcp.MetaSubscriptionID, id.Raw())
	params := &jsonrpc.Object{}
	params.Set("_meta", meta.Bytes())
	for k, v := range extra {
		params.Set(k, v)
	}
	return params.Bytes()
}

// watchLegacy makes out the stream that tells legacy session hs of list
// changes; a nil out stops telling it.
func (s *Server) watchLegacy(hs *hostSession, out sink) {
	w := &s.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.legacy == nil {
		w.legacy = map[*hostSession]sink{}
	}
	if out != nil {
		w.legacy[hs] = out
	} else {
		delete(w.legacy, hs)
	}
}

// subscriptionsListen serves subscriptions/listen (2026-07-28): it
// acknowledges the notification types mcpx can send (toolsListChanged;
// it serves no prompts or resources yet), then holds the request open,
// delivering tagged notifications, until the host cancels or closes it —
// or mcpx stops, which answers it with a complete result.
func (hs *hostSession) subscriptionsListen(ctx context.Context, req *request) {
	var p struct {
		Notifications struct {
			ToolsListChanged bool `json:"toolsListChanged"`
		} `json:"notifications"`
	}
	if raw, ok := req.params.Get("notifications"); !ok || json.Unmarshal(req.msg.Params, &p) != nil || raw == nil {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: subscriptions/listen needs a notifications filter"))
		return
	}
	live := func() bool {
		c, ok := relay.CauseOf(context.Cause(ctx))
		return !ok || c.Answered()
	}
	honored := map[string]bool{}
	if p.Notifications.ToolsListChanged {
		honored["toolsListChanged"] = true
	}
	req.sink.pushWhile(live, jsonrpc.NewNotification("notifications/subscriptions/acknowledged",
		subscriptionMeta(req.msg.ID, map[string]json.RawMessage{"notifications": jsonrpc.MustMarshal(honored)})).Encode())
	l := &listen{id: req.msg.ID, sink: req.sink, live: live}
	w := &hs.srv.watch
	if p.Notifications.ToolsListChanged {
		w.mu.Lock()
		if w.listens == nil {
			w.listens = map[*listen]struct{}{}
		}
		w.listens[l] = struct{}{}
		w.mu.Unlock()
	}
	<-ctx.Done()
	w.mu.Lock()
	delete(w.listens, l)
	w.mu.Unlock()
	if live() { // mcpx itself ends the subscription (stopping)
		reply(req.sink, req.msg.ID, json.RawMessage(`{"resultType":"complete"}`))
	}
}
