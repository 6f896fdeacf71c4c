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
// perHost server gives each host key a session of its own, in an entry of
// its own under the server's (entry.hosts): started on the host's first
// use, with the start backoff and crash count of any entry, stopped by
// EndHost when the host leaves, by the idle stop (eager or not: eager is
// the shared session's), by a reload that changes or removes the server,
// and by shutdown. The shared session stays: listings, capabilities and
// resource subscriptions use it.

// SessionFor returns the live session of server name for the host whose
// key is host, starting it if needed: the host's own session when the
// server is perHost, else (or when host is "") the shared one, as
// Session.
func (p *Pool) SessionFor(ctx context.Context, name, host string) (*Session, error) {
	return p.session(ctx, name, host, "", false)
}

// SessionAs returns the live session of server name for a call of the
// principal person from the host whose key is host: on a per-person
// server, that principal's own session (person.go); else as SessionFor.
func (p *Pool) SessionAs(ctx context.Context, name, host, person string) (*Session, error) {
	return p.session(ctx, name, host, person, true)
}

// session is SessionFor, or SessionAs when asPerson is set.
func (p *Pool) session(ctx context.Context, name, host, person string, asPerson bool) (*Session, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	en := p.entries[name]
	if en == nil {
		p.mu.Unlock()
		return nil, fmt.Errorf("%w %q", ErrUnknownServer, name)
	}
	if asPerson && en.cfg.PerPerson() {
		h, err := p.personLocked(en, host, person)
		if err != nil {
			p.mu.Unlock()
			return nil, err
		}
		en = h
	} else if host != "" && en.cfg.PerHost {
		h := en.hosts[host]
		if h == nil {
			if en.hosts == nil {
				en.hosts = map[string]*entry{}
			}
			h = &entry{cfg: en.cfg, host: host, touched: time.Now()}
			en.hosts[host] = h
		}
		en = h
	}
	s, a, err := p.sessionLocked(en)
	p.mu.Unlock()
	if a == nil {
		return s, err
	}
	return await(ctx, a)
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
	for _, en := range p.entries {
		h := en.hosts[host]
		if h == nil {
			continue
		}
		delete(en.hosts, host)
		why := fmt.Errorf("upstream %q: the session of host %s ended: %w", en.cfg.Name, host, ErrStopped)
		h.retired, h.retiredWhy = true, why
		if s := h.sess; s != nil {
			h.sess = nil
			p.wg.Add(1)
			go func() { defer p.wg.Done(); s.stopWith(why) }()
		}
	}
}

// notifier returns what tells of the notifications of en's sessions: the
// pool's OnNotify, but for a host's session (see Options.OnHostMessage).
func (p *Pool) notifier(en *entry) func(string, *jsonrpc.Message) {
	if en.host == "" {
		return p.opts.OnNotify
	}
	host, onNotify, onMessage := en.host, p.opts.OnNotify, p.opts.OnHostMessage
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

// withHosts returns en and its hosts' entries.
func (en *entry) withHosts() []*entry {
	all := make([]*entry, 0, 1+len(en.hosts))
	all = append(all, en)
	for _, h := range en.hosts {
		all = append(all, h)
	}
	return all
}

// liveHosts counts en's hosts with a session running or starting.
func (en *entry) liveHosts() int {
	n := 0
	for _, h := range en.hosts {
		if h.sess != nil || h.starting != nil {
			n++
		}
	}
	return n
}
