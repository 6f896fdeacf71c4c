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

// listen is one subscriptions/listen request in progress, and the
// notification types it was acknowledged for.
type listen struct {
	id    jsonrpc.ID
	sink  sink
	live  func() bool
	kinds map[string]bool

	mu    sync.Mutex
	acked bool          // nothing goes out before the acknowledgement
	early []earlyUpdate // updates that came before it (subscriptions.go)
}

// ToolsChanged tells every watching host that the tool list changed. It
// never blocks (it only queues); the pool calls it from upstream readers.
func (s *Server) ToolsChanged() { s.listChanged(mcp.MethodToolsListChanged, "toolsListChanged") }

// listChanged tells every watching host that a list changed: legacy
// sessions by method, listens acknowledged for kind tagged with their id.
// Changes of one list within listChangeWindow are told once at its end.
func (s *Server) listChanged(method, kind string) {
	s.lists.do(method, func() { s.tellListChanged(method, kind) })
}

func (s *Server) tellListChanged(method, kind string) {
	w := &s.watch
	w.mu.Lock()
	legacy := make([]sink, 0, len(w.legacy))
	for _, out := range w.legacy {
		legacy = append(legacy, out)
	}
	listens := make([]*listen, 0, len(w.listens))
	for l := range w.listens {
		if l.kinds[kind] {
			listens = append(listens, l)
		}
	}
	w.mu.Unlock()
	plain := jsonrpc.NewNotification(method, nil).Encode()
	for _, out := range legacy {
		out.pushWhile(nil, plain)
	}
	for _, l := range listens {
		l.sink.pushWhile(l.live, jsonrpc.NewNotification(method, subscriptionMeta(l.id, nil)).Encode())
	}
	s.log.Info("told hosts a list changed", "method", method, "legacySessions", len(legacy), "listens", len(listens))
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
	if w.legacy == nil {
		w.legacy = map[*hostSession]sink{}
	}
	if out != nil {
		w.legacy[hs] = out
	} else {
		delete(w.legacy, hs)
	}
	w.mu.Unlock()
	if out != nil {
		hs.streamOpened() // after it is hs's stream (jobask.go)
	}
}

// subscriptionsListen serves subscriptions/listen (2026-07-28): it
// acknowledges the notification types mcpx can send (toolsListChanged;
// promptsListChanged and resourcesListChanged when an upstream serves
// them), then holds the request open, delivering tagged notifications,
// until the host cancels or closes it — or mcpx stops, which answers it
// with a complete result.
func (hs *hostSession) subscriptionsListen(ctx context.Context, req *request) {
	var p struct {
		Notifications struct {
			ToolsListChanged      bool     `json:"toolsListChanged"`
			PromptsListChanged    bool     `json:"promptsListChanged"`
			ResourcesListChanged  bool     `json:"resourcesListChanged"`
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
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
	l := &listen{id: req.msg.ID, sink: req.sink, live: live, kinds: honored}
	// Resource subscriptions first (subscriptions.go): the ack names only
	// those mcpx could make upstream.
	subscribed := hs.listenResources(ctx, req, l, p.Notifications.ResourceSubscriptions)
	defer hs.srv.leaveSubscriptions(l)
	if p.Notifications.PromptsListChanged || p.Notifications.ResourcesListChanged {
		f := hs.srv.features()
		if p.Notifications.PromptsListChanged && f.prompts {
			honored["promptsListChanged"] = true
		}
		if p.Notifications.ResourcesListChanged && f.resources {
			honored["resourcesListChanged"] = true
		}
	}
	// The ack is queued and the listen registered at once, under the
	// watchers' lock: a change after the ack is never missed, and none
	// comes before it.
	ack := map[string]any{}
	for k, v := range honored {
		ack[k] = v
	}
	if subscribed != nil {
		ack["resourceSubscriptions"] = subscribed
	}
	w := &hs.srv.watch
	w.mu.Lock()
	l.acknowledge(jsonrpc.NewNotification(mcp.MethodSubscriptionsAcknowledged,
		subscriptionMeta(req.msg.ID, map[string]json.RawMessage{"notifications": jsonrpc.MustMarshal(ack)})).Encode(), subscribed)
	if len(honored) > 0 {
		if w.listens == nil {
			w.listens = map[*listen]struct{}{}
		}
		w.listens[l] = struct{}{}
	}
	w.mu.Unlock()
	<-ctx.Done()
	w.mu.Lock()
	delete(w.listens, l)
	w.mu.Unlock()
	if live() { // mcpx itself ends the subscription (stopping)
		reply(req.sink, req.msg.ID, json.RawMessage(`{"resultType":"complete"}`))
	}
}

// streamOf returns the stream of legacy session hs that carries what mcpx
// tells it outside its requests (its stdio connection, or the GET stream
// of an HTTP session while one is open), or nil.
func (s *Server) streamOf(hs *hostSession) sink {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	return s.watch.legacy[hs]
}
