package upstream

import (
	"context"
	"fmt"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// Sessions of a perHost server (config.Server.PerHost).
//
// A shared session serves every host, so what a legacy upstream keeps per
// client (roots, log level, subscriptions) is shared, and a request it
// sends mcpx on a transport that names no call (stdio) cannot be tied to
// one host once calls of two hosts are in flight (see attribute). A
// perHost server gives each host key a session of its own, in a slot of
// its own under the server's (slot.hosts): started on the host's first
// use, with the start backoff and crash count of any slot, stopped by
// EndHost when the host leaves, by the idle stop (eager or not: eager is
// the shared session's), by a reload that changes or removes the server,
// and by shutdown. The shared session stays: listings, capabilities and
// resource subscriptions use it.

// SessionFor returns the live session of server name for the host whose
// key is host, starting it if needed: the host's own session when the
// server is perHost, else (or when host is "") the shared one, as
// Session.
func (p *Pool) SessionFor(ctx context.Context, name, host string) (*Session, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	sl := p.slots[name]
	if sl == nil {
		p.mu.Unlock()
		return nil, fmt.Errorf("%w %q", ErrUnknownServer, name)
	}
	if host != "" && sl.cfg.PerHost {
		h := sl.hosts[host]
		if h == nil {
			if sl.hosts == nil {
				sl.hosts = map[string]*slot{}
			}
			h = &slot{cfg: sl.cfg, host: host, touched: time.Now()}
			sl.hosts[host] = h
		}
		sl = h
	}
	return p.sessionLocked(ctx, sl)
}

// EndHost stops the sessions of the host whose key is host, in every
// perHost server: the host has left. Their calls in flight end with an
// error that wraps ErrStopped and says why; a start under way stops the
// session it makes. It does not wait for the sessions to end (Run does).
func (p *Pool) EndHost(host string) {
	if host == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, sl := range p.slots {
		h := sl.hosts[host]
		if h == nil {
			continue
		}
		delete(sl.hosts, host)
		why := fmt.Errorf("upstream %q: the session of host %s ended: %w", sl.cfg.Name, host, ErrStopped)
		h.retired, h.retiredWhy = true, why
		if s := h.sess; s != nil {
			h.sess = nil
			p.wg.Add(1)
			go func() { defer p.wg.Done(); s.stopWith(why) }()
		}
	}
}

// notifier returns what tells of the notifications of sl's sessions: the
// pool's OnNotify, but for a host's session (see Options.OnHostMessage).
func (p *Pool) notifier(sl *slot) func(string, *jsonrpc.Message) {
	if sl.host == "" {
		return p.opts.OnNotify
	}
	host, onNotify, onMessage := sl.host, p.opts.OnNotify, p.opts.OnHostMessage
	return func(server string, msg *jsonrpc.Message) {
		switch msg.Method {
		case mcp.MethodMessage:
			if onMessage != nil {
				onMessage(server, host, msg)
			}
		case mcp.MethodResourcesUpdated:
		default:
			if onNotify != nil {
				onNotify(server, msg)
			}
		}
	}
}

// withHosts returns sl and its hosts' slots.
func (sl *slot) withHosts() []*slot {
	all := make([]*slot, 0, 1+len(sl.hosts))
	all = append(all, sl)
	for _, h := range sl.hosts {
		all = append(all, h)
	}
	return all
}

// liveHosts counts sl's hosts with a session running or starting.
func (sl *slot) liveHosts() int {
	n := 0
	for _, h := range sl.hosts {
		if h.sess != nil || h.starting != nil {
			n++
		}
	}
	return n
}
