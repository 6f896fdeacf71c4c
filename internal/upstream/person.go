package upstream

import (
	"errors"
	"fmt"
	"time"
)

// Sessions of a per-person server (config.Server.PerPerson).
//
// Each principal that calls a per-person server gets a session of its
// own, whose requests carry that principal's own sign-in (and identity
// header): an entry under the server's, as a perHost server's hosts have
// (perhost.go), keyed by the principal's ID (and, on a server that is
// perHost too, the host's key), so that no call of one principal is ever
// sent on another's authenticated session. The shared session stays, for
// listings, with the server's shared sign-in if there is one.
//
// Bounds: a principal's session stops after the server's idle stop, or
// PersonIdle when it sets none; at most MaxPersonSessions are kept per
// server, and a new principal past that stops the one unused for the
// longest that has nothing in flight (or is refused, if all are busy).

// Per-person session bounds.
const (
	PersonIdle        = 15 * time.Minute
	MaxPersonSessions = 64
)

// ErrNoPrincipal: a call to a per-person server named no principal.
var ErrNoPrincipal = errors.New("a per-person server is called only for a principal")

// personLocked returns the entry of person's own session of en (a
// per-person server), made if need be. p.mu is held.
func (p *Pool) personLocked(en *entry, host, person string) (*entry, error) {
	if person == "" {
		return nil, fmt.Errorf("upstream %q: %w", en.cfg.Name, ErrNoPrincipal)
	}
	key := "person\x00" + person
	if en.cfg.PerHost && host != "" {
		key += "\x00" + host
	}
	h := en.hosts[key]
	if h == nil {
		if err := p.makeRoomLocked(en); err != nil {
			return nil, err
		}
		if en.hosts == nil {
			en.hosts = map[string]*entry{}
		}
		h = &entry{cfg: en.cfg, host: key, person: person, touched: time.Now()}
		en.hosts[key] = h
	}
	return h, nil
}

// makeRoomLocked stops the per-person session of en unused the longest,
// with nothing in flight, when en has MaxPersonSessions. p.mu is held.
func (p *Pool) makeRoomLocked(en *entry) error {
	var oldest *entry
	var oldestKey string
	n := 0
	for k, h := range en.hosts {
		if h.person == "" {
			continue
		}
		n++
		if h.starting != nil || (h.sess != nil && h.sess.Pending() > 0) {
			continue
		}
		if oldest == nil || h.touched.Before(oldest.touched) {
			oldest, oldestKey = h, k
		}
	}
	if n < MaxPersonSessions {
		return nil
	}
	if oldest == nil {
		return fmt.Errorf("upstream %q: %d people's sessions are busy, the most mcpx keeps; try again when a call ends", en.cfg.Name, n)
	}
	delete(en.hosts, oldestKey)
	why := fmt.Errorf("upstream %q: a person's session was stopped to make room for another's: %w", en.cfg.Name, ErrStopped)
	oldest.retired, oldest.retiredWhy = true, why
	if s := oldest.sess; s != nil {
		oldest.sess = nil
		p.wg.Add(1)
		go func() { defer p.wg.Done(); s.stopWith(why) }()
	}
	return nil
}

// idleStop is how long h may go without a call before the pool stops it.
func (h *entry) idleStop() time.Duration {
	if h.person != "" && h.cfg.IdleStop <= 0 {
		return PersonIdle
	}
	return h.cfg.IdleStop
}
