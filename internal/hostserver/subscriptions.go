package hostserver

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// Methods of resources and prompts.
const (
	methodResourcesList          = "resources/list"
	methodResourceTemplatesList  = "resources/templates/list"
	methodResourcesRead          = "resources/read"
	methodResourcesSubscribe     = "resources/subscribe"
	methodResourcesUnsubscribe   = "resources/unsubscribe"
	methodResourcesUpdated       = "notifications/resources/updated"
	methodResourcesListChanged   = "notifications/resources/list_changed"
	methodPromptsList            = "prompts/list"
	methodPromptsGet             = "prompts/get"
	methodPromptsListChanged     = "notifications/prompts/list_changed"
	methodCompletionComplete     = "completion/complete"
	methodLoggingSetLevel        = "logging/setLevel"
	upstreamSubscriptionDeadline = 10 * time.Second
)

// subKey names one upstream resource subscription: mcpx subscribes once
// per URI per upstream, whatever number of hosts asked.
type subKey struct{ server, uri string }

// subscriber is who hears of a resource's updates: a legacy session with
// a stream (*hostSession), or a 2026-07-28 subscriptions/listen (*listen).
// resourceUpdated queues the notification; it must not block.
type subscriber interface {
	resourceUpdated(params *jsonrpc.Object)
}

// resourceUpdated queues an update on a legacy session's stream: stdio,
// or an HTTP session's GET stream while one is open (an update with no
// stream to carry it is lost, as the spec's transport has it).
func (hs *hostSession) resourceUpdated(params *jsonrpc.Object) {
	if out := hs.srv.streamOf(hs); out != nil {
		out.pushWhile(nil, jsonrpc.NewNotification(methodResourcesUpdated, params.Bytes()).Encode())
	}
}

// resourceUpdated queues an update on a listen's stream, tagged with its
// subscription id; none before the acknowledgement (an update that comes
// while the listen's subscriptions are being made is not its own yet).
func (l *listen) resourceUpdated(params *jsonrpc.Object) {
	if !l.acked.Load() {
		return
	}
	mcp.SetMeta(params, mcp.MetaSubscriptionID, l.id.Raw())
	l.sink.pushWhile(l.live, jsonrpc.NewNotification(methodResourcesUpdated, params.Bytes()).Encode())
}

// resourceSub is one upstream subscription and the subscribers behind it,
// each with the URI as it named it (the upstream's, or mcpx's form).
type resourceSub struct {
	op    sync.Mutex            // held across the upstream's subscribe and unsubscribe
	hosts map[subscriber]string // guarded by subscriptions.mu
}

// subscriptions are every host's resource subscriptions.
type subscriptions struct {
	mu   sync.Mutex
	subs map[subKey]*resourceSub
}

func (ss *subscriptions) get(k subKey) *resourceSub {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.subs == nil {
		ss.subs = map[subKey]*resourceSub{}
	}
	s := ss.subs[k]
	if s == nil {
		s = &resourceSub{hosts: map[subscriber]string{}}
		ss.subs[k] = s
	}
	return s
}

// subscribe adds hs to k's hosts, subscribing upstream if it is the first.
func (srv *Server) subscribe(ctx context.Context, hs subscriber, k subKey, hostURI string) error {
	s := srv.lockSub(k)
	defer s.op.Unlock()
	if srv.subs.count(s) == 0 {
		if err := srv.upstreamSubscription(ctx, methodResourcesSubscribe, k); err != nil {
			srv.dropIfEmpty(k, s)
			return err
		}
		srv.log.Info("subscribed to an upstream resource", "server", k.server, "uri", k.uri)
	}
	srv.subs.mu.Lock()
	s.hosts[hs] = hostURI
	srv.subs.mu.Unlock()
	return nil
}

// lockSub returns k's subscription with its op lock held: one still in the
// map, so that a subscribe never joins one whose upstream unsubscribe is
// under way.
func (srv *Server) lockSub(k subKey) *resourceSub {
	for {
		s := srv.subs.get(k)
		s.op.Lock()
		srv.subs.mu.Lock()
		current := srv.subs.subs[k] == s
		srv.subs.mu.Unlock()
		if current {
			return s
		}
		s.op.Unlock()
	}
}

func (ss *subscriptions) count(s *resourceSub) int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(s.hosts)
}

// unsubscribe removes hs from k's hosts, unsubscribing upstream if it was
// the last. It reports whether hs was subscribed.
func (srv *Server) unsubscribe(ctx context.Context, hs subscriber, k subKey) (bool, error) {
	s := srv.lockSub(k)
	defer s.op.Unlock()
	srv.subs.mu.Lock()
	_, had := s.hosts[hs]
	delete(s.hosts, hs)
	left := len(s.hosts)
	srv.subs.mu.Unlock()
	var err error
	if had && left == 0 {
		err = srv.upstreamSubscription(ctx, methodResourcesUnsubscribe, k)
		srv.log.Info("unsubscribed from an upstream resource", "server", k.server, "uri", k.uri, "err", err)
	}
	srv.dropIfEmpty(k, s) // after the upstream's unsubscribe: see lockSub
	return had, err
}

func (srv *Server) dropIfEmpty(k subKey, s *resourceSub) {
	srv.subs.mu.Lock()
	defer srv.subs.mu.Unlock()
	if len(s.hosts) == 0 && srv.subs.subs[k] == s {
		delete(srv.subs.subs, k)
	}
}

func (srv *Server) upstreamSubscription(ctx context.Context, method string, k subKey) error {
	if method == methodResourcesSubscribe {
		sess, err := srv.relay.Pool().Session(ctx, k.server)
		if err != nil {
			return err
		}
		if sess.Modern() {
			// 2026-07-28 removed resources/subscribe: updates come on a
			// subscriptions/listen, which mcpx does not open upstream yet.
			return jsonrpc.Errorf(jsonrpc.CodeMethodNotFound,
				"mcpx cannot yet subscribe to resources of server %q: it speaks %s, where updates come through subscriptions/listen", k.server, sess.Version())
		}
	}
	params := &jsonrpc.Object{}
	params.Set("uri", jsonrpc.MustMarshal(k.uri))
	_, err := srv.relay.Send(ctx, nil, relay.Request{Server: k.server, Method: method, Params: params})
	return err
}

// leaveSubscriptions unsubscribes a host or listen that has gone from
// everything it subscribed to.
func (srv *Server) leaveSubscriptions(hs subscriber) {
	srv.subs.mu.Lock()
	var keys []subKey
	for k, s := range srv.subs.subs {
		if _, ok := s.hosts[hs]; ok {
			keys = append(keys, k)
		}
	}
	srv.subs.mu.Unlock()
	for _, k := range keys {
		ctx, cancel := context.WithTimeout(context.Background(), upstreamSubscriptionDeadline)
		_, _ = srv.unsubscribe(ctx, hs, k)
		cancel()
	}
}

// UpstreamNotified handles an upstream's notifications other than
// progress and tools list changes; the pool calls it from upstream
// readers, and it never blocks (it only queues).
func (srv *Server) UpstreamNotified(server string, msg *jsonrpc.Message) {
	switch msg.Method {
	case methodResourcesUpdated:
		srv.resourceUpdated(server, msg)
	case methodResourcesListChanged:
		srv.listChanged(methodResourcesListChanged, "resourcesListChanged")
	case methodPromptsListChanged:
		srv.listChanged(methodPromptsListChanged, "promptsListChanged")
	case mcp.MethodMessage:
		srv.logMessage(server, msg)
	}
}

// resourceUpdated fans an upstream's notifications/resources/updated out
// to the hosts subscribed to that URI of that upstream, each under the URI
// it subscribed with; the params are otherwise byte for byte.
func (srv *Server) resourceUpdated(server string, msg *jsonrpc.Message) {
	params, err := jsonrpc.ParseObject(msg.Params)
	if err != nil {
		return
	}
	var uri string
	if raw, ok := params.Get("uri"); !ok || json.Unmarshal(raw, &uri) != nil {
		return
	}
	hosts := map[subscriber]string{}
	srv.subs.mu.Lock()
	if s := srv.subs.subs[subKey{server, uri}]; s != nil {
		for hs, u := range s.hosts {
			hosts[hs] = u
		}
	}
	srv.subs.mu.Unlock()
	for sub, hostURI := range hosts {
		p, _ := jsonrpc.ParseObject(msg.Params) // a copy for each: a listen tags its own
		if hostURI != uri {
			p.Set("uri", jsonrpc.MustMarshal(hostURI))
		}
		sub.resourceUpdated(p)
	}
	srv.log.Debug("resource updated", "server", server, "uri", uri, "hosts", len(hosts))
}

// listenResources subscribes a listen to the resources it names and
// returns the URIs it could subscribe to, in its order (nil when it named
// none). A URI mcpx cannot route, or whose upstream cannot be subscribed
// to, is left out of the acknowledgement, as the revision has it, and
// logged.
func (hs *hostSession) listenResources(ctx context.Context, l *listen, uris []string) []string {
	if len(uris) == 0 {
		return nil
	}
	out := []string{}
	r := hs.srv.catalog.Resources(ctx)
	for _, uri := range uris {
		server, upURI, _, err := r.Route(uri)
		if err == nil {
			err = hs.srv.subscribe(ctx, l, subKey{server, upURI}, uri)
		}
		if err != nil {
			hs.srv.log.Info("left a resource out of a listen", "host", hs.id, "uri", uri, "err", err)
			continue
		}
		out = append(out, uri)
	}
	return out
}
