package hostsurface

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/upstream"
)

const upstreamSubscriptionDeadline = 10 * time.Second

// subKey names one upstream resource subscription: mcpx subscribes once
// per URI per upstream, whatever number of hosts asked.
type subKey struct{ server, uri string }

// subscriber is who hears of a resource's updates: a legacy session with
// a stream (legacySub), or a 2026-07-28 subscriptions/listen (*listen).
// resourceUpdated queues the notification (params, with uri as the
// subscriber named it); it must not block.
type subscriber interface {
	resourceUpdated(uri string, params *jsonrpc.Object)
}

// legacySub is a legacy session as a subscriber: equal for one session.
type legacySub struct {
	s *Surface
	h Host
}

// resourceUpdated queues an update on a legacy session's stream: stdio,
// or an HTTP session's GET stream while one is open (an update with no
// stream to carry it is lost, as the spec's transport has it).
func (l legacySub) resourceUpdated(_ string, params *jsonrpc.Object) {
	if out := l.s.StreamOf(l.h); out != nil {
		out.Notify(jsonrpc.NewNotification(mcp.MethodResourcesUpdated, params.Bytes()).Encode())
	}
}

// maxEarlyUpdates bounds the updates a listen keeps while its
// subscriptions are being made.
const maxEarlyUpdates = 64

// earlyUpdate is an update that came for a listen before its
// acknowledgement.
type earlyUpdate struct {
	uri  string
	line []byte
}

// resourceUpdated queues an update on a listen's stream, tagged with its
// subscription id. One that comes while the listen's subscriptions are
// still being made (the upstream's is in place, the host's ack not yet
// sent) is kept and sent right after the acknowledgement, if that names
// its URI: nothing goes before the ack, and nothing after the upstream
// subscription is lost.
func (l *listen) resourceUpdated(uri string, params *jsonrpc.Object) {
	mcp.SetMeta(params, mcp.MetaSubscriptionID, l.id.Raw())
	line := jsonrpc.NewNotification(mcp.MethodResourcesUpdated, params.Bytes()).Encode()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.acked {
		if len(l.early) < maxEarlyUpdates {
			l.early = append(l.early, earlyUpdate{uri, line})
		}
		return
	}
	l.r.Push(l.live, line)
}

// acknowledge queues a listen's acknowledgement, then the updates that
// came before it for the URIs it names; from then on updates go out as
// they come.
func (l *listen) acknowledge(ack []byte, subscribed []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.r.Push(l.live, ack)
	for _, u := range l.early {
		if slices.Contains(subscribed, u.uri) {
			l.r.Push(l.live, u.line)
		}
	}
	l.early, l.acked = nil, true
}

// resourceSub is one upstream subscription and the subscribers behind it,
// each with the URI as it named it (the upstream's, or mcpx's form).
type resourceSub struct {
	op    sync.Mutex             // held across the upstream's subscribe and unsubscribe
	up    *upstream.Subscription // guarded by op; nil until made
	hosts map[subscriber]string  // guarded by subscriptions.mu
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
// hs is added first, so that it hears every update that comes once the
// upstream's subscription is in place.
func (srv *Surface) subscribe(ctx context.Context, hs subscriber, k subKey, hostURI string) error {
	s := srv.lockSub(k)
	defer s.op.Unlock()
	srv.subs.mu.Lock()
	_, had := s.hosts[hs]
	s.hosts[hs] = hostURI
	srv.subs.mu.Unlock()
	if s.up != nil {
		return nil
	}
	up, err := srv.relay.Pool().Subscribe(ctx, k.server, k.uri)
	if err != nil {
		if !had {
			srv.subs.mu.Lock()
			delete(s.hosts, hs)
			srv.subs.mu.Unlock()
		}
		srv.dropIfEmpty(k, s)
		return err
	}
	s.up = up
	srv.log.Info("subscribed to an upstream resource", "server", k.server, "uri", k.uri)
	return nil
}

// lockSub returns k's subscription with its op lock held: one still in the
// map, so that a subscribe never joins one whose upstream unsubscribe is
// under way.
func (srv *Surface) lockSub(k subKey) *resourceSub {
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

// unsubscribe removes hs from k's hosts, unsubscribing upstream if it was
// the last. It reports whether hs was subscribed.
func (srv *Surface) unsubscribe(ctx context.Context, hs subscriber, k subKey) (bool, error) {
	s := srv.lockSub(k)
	defer s.op.Unlock()
	srv.subs.mu.Lock()
	_, had := s.hosts[hs]
	delete(s.hosts, hs)
	left := len(s.hosts)
	srv.subs.mu.Unlock()
	var err error
	if left == 0 && s.up != nil {
		err = s.up.Close(ctx)
		s.up = nil
		srv.log.Info("unsubscribed from an upstream resource", "server", k.server, "uri", k.uri, "err", err)
	}
	srv.dropIfEmpty(k, s) // after the upstream's unsubscribe: see lockSub
	return had, err
}

func (srv *Surface) dropIfEmpty(k subKey, s *resourceSub) {
	srv.subs.mu.Lock()
	defer srv.subs.mu.Unlock()
	if len(s.hosts) == 0 && srv.subs.subs[k] == s {
		delete(srv.subs.subs, k)
	}
}

// leaveSubscriptions unsubscribes a host or listen that has gone from
// everything it subscribed to.
func (srv *Surface) leaveSubscriptions(hs subscriber) {
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

// Notified handles an upstream's resource updates and log messages; it
// never blocks (it only queues). List changes are the face's to coalesce
// (TellListChanged).
func (srv *Surface) Notified(server string, msg *jsonrpc.Message) {
	switch msg.Method {
	case mcp.MethodResourcesUpdated:
		srv.resourceUpdated(server, msg)
	case mcp.MethodMessage:
		srv.logMessage(server, msg)
	}
}

// resourceUpdated fans an upstream's notifications/resources/updated out
// to the hosts subscribed to that URI of that upstream, each under the URI
// it subscribed with and without the subscription id of mcpx's upstream
// listen; the params are otherwise byte for byte.
func (srv *Surface) resourceUpdated(server string, msg *jsonrpc.Message) {
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
		if p.Has("_meta") { // the upstream's listen id is mcpx's, not the host's
			mcp.EditMeta(p, func(m *jsonrpc.Object) { m.Delete(mcp.MetaSubscriptionID) })
		}
		sub.resourceUpdated(hostURI, p)
	}
	srv.log.Debug("resource updated", "server", server, "uri", uri, "hosts", len(hosts))
}

// listenResources subscribes a listen to the resources it names and
// returns the URIs it could subscribe to, in its order (nil when it named
// none). A URI mcpx cannot route among the servers the host may use, or
// whose upstream cannot be subscribed to, is left out of the
// acknowledgement, as the revision has it, and logged.
func (s *Surface) listenResources(ctx context.Context, h Host, r Request, l *listen, uris []string) []string {
	if len(uris) == 0 {
		return nil
	}
	out := []string{}
	res := s.catalog.Resources(ctx, h.Visible(r))
	for _, uri := range uris {
		server, upURI, _, err := res.Route(uri)
		if err == nil {
			err = s.subscribe(ctx, l, subKey{server, upURI}, uri)
		}
		if err != nil {
			s.log.Info("left a resource out of a listen", "host", h.ID(), "uri", uri, "err", err)
			continue
		}
		out = append(out, uri)
	}
	return out
}
