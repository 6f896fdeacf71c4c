package hostsurface

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
	legacy  map[Host]Stream
	listens map[*listen]struct{}
}

// listen is one subscriptions/listen request in progress, and the
// notification types it was acknowledged for.
type listen struct {
	id    jsonrpc.ID
	r     Request // where its notifications go
	live  func() bool
	kinds map[string]bool

	mu    sync.Mutex
	acked bool          // nothing goes out before the acknowledgement
	early []earlyUpdate // updates that came before it (subscriptions.go)
}

// TellListChanged tells every watching host that a list changed: legacy
// sessions by method, listens acknowledged for kind tagged with their id.
// It never blocks (it only queues).
func (s *Surface) TellListChanged(method, kind string) {
	w := &s.watch
	w.mu.Lock()
	legacy := make([]Stream, 0, len(w.legacy))
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
		out.Notify(plain)
	}
	for _, l := range listens {
		l.r.Push(l.live, jsonrpc.NewNotification(method, subscriptionMeta(l.id, nil)).Encode())
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

// Watch makes out the stream that tells legacy session h of list
// changes, log messages and resource updates; a nil out stops telling it.
func (s *Surface) Watch(h Host, out Stream) {
	w := &s.watch
	w.mu.Lock()
	if w.legacy == nil {
		w.legacy = map[Host]Stream{}
	}
	if out != nil {
		w.legacy[h] = out
	} else {
		delete(w.legacy, h)
	}
	w.mu.Unlock()
}

// Listen serves subscriptions/listen (2026-07-28): it
// acknowledges the notification types mcpx can send (toolsListChanged;
// promptsListChanged and resourcesListChanged when an upstream serves
// them), then holds the request open, delivering tagged notifications,
// until the host cancels or closes it — or mcpx stops, which answers it
// with a complete result.
func (s *Surface) Listen(ctx context.Context, h Host, r Request) {
	var p struct {
		Notifications struct {
			ToolsListChanged      bool     `json:"toolsListChanged"`
			PromptsListChanged    bool     `json:"promptsListChanged"`
			ResourcesListChanged  bool     `json:"resourcesListChanged"`
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
	}
	if raw, ok := r.Params().Get("notifications"); !ok || json.Unmarshal(r.Message().Params, &p) != nil || raw == nil {
		fail(r, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: subscriptions/listen needs a notifications filter"))
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
	l := &listen{id: r.Message().ID, r: r, live: live, kinds: honored}
	// Resource subscriptions first (subscriptions.go): the ack names only
	// those mcpx could make upstream.
	subscribed := s.listenResources(ctx, h, r, l, p.Notifications.ResourceSubscriptions)
	defer s.leaveSubscriptions(l)
	if p.Notifications.PromptsListChanged || p.Notifications.ResourcesListChanged {
		f := s.Features()
		if p.Notifications.PromptsListChanged && f.Prompts {
			honored["promptsListChanged"] = true
		}
		if p.Notifications.ResourcesListChanged && f.Resources {
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
	w := &s.watch
	w.mu.Lock()
	l.acknowledge(jsonrpc.NewNotification(mcp.MethodSubscriptionsAcknowledged,
		subscriptionMeta(r.Message().ID, map[string]json.RawMessage{"notifications": jsonrpc.MustMarshal(ack)})).Encode(), subscribed)
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
		reply(r, json.RawMessage(mcp.CompleteResult))
	}
}

// StreamOf returns the stream of legacy session h that carries what mcpx
// tells it outside its requests (its stdio connection, or the GET stream
// of an HTTP session while one is open), or nil.
func (s *Surface) StreamOf(h Host) Stream {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	return s.watch.legacy[h]
}
