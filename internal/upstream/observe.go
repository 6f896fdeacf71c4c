package upstream

import (
	"errors"
	"fmt"
	"time"
)

// Observer is told of the life of the pool's servers, for metrics and the
// live view. It owns nothing and changes nothing: its methods are called
// with the pool's lock held, must not block and must not call back into
// the pool. A perHost server's sessions count as their server's.
type Observer interface {
	// UpstreamStarted is told of each session that started; restart is
	// set when the server had started before (since the pool was made,
	// or a reload last changed it).
	UpstreamStarted(server string, restart bool)
	// UpstreamStartFailed is told of each start that failed.
	UpstreamStartFailed(server string, err error)
	// UpstreamCrashed is told of each session that ended on its own (its
	// process exited, its connection failed), not stopped by mcpx.
	UpstreamCrashed(server string, err error)
}

// Restart stops server name's sessions (its shared one and a perHost
// server's host sessions), their requests in flight ending with an error
// that says so, and starts its shared session again at once, whatever
// its backoff. It fails for a server the pool does not have.
func (p *Pool) Restart(name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	en := p.entries[name]
	if en == nil {
		return fmt.Errorf("%w %q", ErrUnknownServer, name)
	}
	why := fmt.Errorf("upstream %q was restarted: %w", name, ErrStopped)
	for _, h := range en.withHosts() {
		if s := h.sess; s != nil {
			h.sess = nil
			h.lastErr, h.lastEnd = nil, time.Now()
			p.wg.Add(1)
			go func() { defer p.wg.Done(); s.stopWith(why) }()
		}
	}
	en.failures, en.retryAt, en.crashes, en.crashRetryAt, en.lastErr = 0, time.Time{}, 0, time.Time{}, nil
	en.idleTools = nil
	if en.starting == nil {
		p.startLocked(en)
	}
	return nil
}

// observeEndLocked tells the observer of s's end, unless mcpx stopped it.
// p.mu is held.
func (p *Pool) observeEndLocked(s *Session) {
	if o := p.opts.Observer; o != nil && !errors.Is(s.Err(), ErrStopped) {
		o.UpstreamCrashed(s.Server, s.Err())
	}
}
