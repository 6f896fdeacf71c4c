package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The life of a server between its starts, as the pool tends it.
//
//   - A start that fails makes the next start wait (startBackoff): 1 s,
//     2 s, 4 s ... up to a minute, failures in a row; a start that
//     succeeds clears the count.
//   - A session that ends with an error within crashWindow of its start
//     is a crash; a session that lived longer clears the count.
//   - An eager server is started when the pool runs, and again as soon as
//     its session ends: at once after a first crash, and from the second
//     crash in a row on after the same growing waits. (A lazy server is
//     started by the next call, crash or not: each start then serves a
//     call, so a crash loop costs one start per call and no more.)
//   - A server with an idle stop (config idleStop) whose session has had
//     no request in flight and no resource subscription (subscribe.go),
//     and has not been handed out, for that long is stopped; its tools are kept, so that a listing does not start it
//     again, and the next call does.

// crashWindow is how long a session must live for its end not to count
// as a crash of a server that cannot stay up.
const crashWindow = 10 * time.Second

// tendEvery is how often the pool looks for idle servers and eager ones
// to start.
const tendEvery = 250 * time.Millisecond

// startBackoff is how long to wait before starting a server again after n
// failures in a row: 1s, 2s, 4s ... up to a minute.
func startBackoff(n int) time.Duration {
	d := time.Second << min(n-1, 6)
	return min(d, time.Minute)
}

// endedLocked records that s, the session of en, has ended (or is ending
// on its own), and counts it as a crash if it failed young.
func (p *Pool) endedLocked(en *entry, s *Session) {
	now := time.Now()
	en.sess = nil
	en.lastErr, en.lastEnd = s.Err(), now
	p.observeEndLocked(s)
	if errors.Is(s.Err(), ErrStopped) {
		return // stopped by mcpx: no crash
	}
	if now.Sub(s.Started) >= crashWindow {
		en.crashes = 0
		return
	}
	en.crashes++
	if en.crashes > 1 {
		en.crashRetryAt = now.Add(startBackoff(en.crashes - 1))
	}
}

// tend starts eager servers and stops idle ones until ctx ends.
func (p *Pool) tend(ctx context.Context) {
	p.tendOnce(time.Now())
	t := time.NewTicker(tendEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			p.tendOnce(now)
		}
	}
}

func (p *Pool) tendOnce(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	for _, en := range p.entries {
		p.tendEntry(en, now)
		for key, h := range en.hosts {
			if p.tendHost(h, now) {
				delete(en.hosts, key)
			}
		}
	}
}

// tendEntry starts en (a server's shared session) if it is eager and
// stops it if it has been idle too long. p.mu is held.
func (p *Pool) tendEntry(en *entry, now time.Time) {
	s := en.sess
	switch {
	case s != nil && s.Err() == nil && (s.Pending() > 0 || s.subs.Load() > 0):
		en.busy = true
	case en.busy:
		// The first look at it idle: its idle time starts now (at
		// most tendEvery late, never early).
		en.busy = false
		en.touched = now
	case s != nil && s.Err() == nil && !en.cfg.Eager && en.cfg.IdleStop > 0 && now.Sub(en.touched) >= en.cfg.IdleStop:
		p.log.Info("stopping an idle server", "server", en.cfg.Name, "idle", en.cfg.IdleStop)
		en.idleTools = s.cachedTools()
		en.sess = nil
		en.lastErr, en.lastEnd = nil, now
		why := fmt.Errorf("server %q was stopped after %s without calls", en.cfg.Name, en.cfg.IdleStop)
		p.wg.Add(1)
		go func() { defer p.wg.Done(); s.stopWith(why) }()
	case s == nil && en.cfg.Eager && en.starting == nil && !en.retired && !now.Before(en.nextStart()):
		p.startLocked(en)
	}
}

// tendHost stops h (a host's session of a perHost server) once it has
// been idle for the server's idle stop, eager or not, and reports whether
// h can go: it has no session, none starting, and has not been used for
// that long (a host that went away leaves nothing behind for long). p.mu
// is held.
func (p *Pool) tendHost(h *entry, now time.Time) bool {
	s, idle := h.sess, h.idleStop()
	switch {
	case s != nil && s.Err() == nil && (s.Pending() > 0 || s.subs.Load() > 0):
		h.busy = true
	case h.busy:
		h.busy = false
		h.touched = now
	case idle <= 0 || now.Sub(h.touched) < idle:
	case s != nil && s.Err() == nil:
		p.log.Info("stopping an idle host session", "server", h.cfg.Name, "host", h.host, "idle", idle)
		h.sess = nil
		h.lastErr, h.lastEnd = nil, now
		why := fmt.Errorf("upstream %q: the session of host %s was stopped after %s without calls: %w", h.cfg.Name, h.host, idle, ErrStopped)
		p.wg.Add(1)
		go func() { defer p.wg.Done(); s.stopWith(why) }()
		return true
	case s == nil && h.starting == nil && !now.Before(h.retryAt):
		return true
	}
	return false
}

// Tools returns the tools of server name: those of its live session
// (started if needed), or, for a server stopped for being idle, those it
// had then, without starting it.
func (p *Pool) Tools(ctx context.Context, name string) ([]Tool, error) {
	p.mu.Lock()
	if en := p.entries[name]; en != nil && en.sess == nil && en.starting == nil && en.idleTools != nil {
		tools := en.idleTools
		p.mu.Unlock()
		return tools, nil
	}
	p.mu.Unlock()
	s, err := p.Session(ctx, name)
	if err != nil {
		return nil, err
	}
	return s.Tools(ctx)
}

// Tool returns the tool of server name called tool (see Tools); found
// is false when the server does not list it.
func (p *Pool) Tool(ctx context.Context, name, tool string) (t Tool, found bool, err error) {
	tools, err := p.Tools(ctx, name)
	for _, t := range tools {
		if t.Name == tool {
			return t, true, nil
		}
	}
	return Tool{}, false, err
}

// Listed reports whether server name's tools, as last listed, include
// tool. It lists and starts nothing, and says false for a server whose
// tools were not listed yet: a cheap question for whoever labels calls
// (the metrics) and must not wait.
func (p *Pool) Listed(name, tool string) bool {
	p.mu.Lock()
	var tools []Tool
	var s *Session
	if en := p.entries[name]; en != nil {
		s, tools = en.sess, en.idleTools
	}
	p.mu.Unlock()
	if s != nil {
		tools = s.cachedTools()
	}
	for i := range tools {
		if tools[i].Name == tool {
			return true
		}
	}
	return false
}

// nextStart is when an eager server may start again: after its start
// failures' wait and its crashes' wait.
func (en *entry) nextStart() time.Time {
	var t time.Time
	if en.failures > 0 {
		t = en.retryAt
	}
	if en.crashes > 1 && en.crashRetryAt.After(t) {
		t = en.crashRetryAt
	}
	return t
}

// Capabilities returns the capabilities server name declared: those of
// its live session, else those of its last session (a server stopped for
// being idle, or one that crashed, is not started again to ask), else
// those of a session started now (ctx bounds the wait).
func (p *Pool) Capabilities(ctx context.Context, name string) (json.RawMessage, error) {
	p.mu.Lock()
	if en := p.entries[name]; en != nil && en.caps != nil {
		caps := en.caps
		p.mu.Unlock()
		return caps, nil
	}
	p.mu.Unlock()
	s, err := p.Session(ctx, name)
	if err != nil {
		return nil, err
	}
	return s.capabilities, nil
}
