package hostserver

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// repeatWindow is how long repeated log lines are counted instead of
// written, and how far apart list-change notifications go to hosts.
const repeatWindow = 10 * time.Second

// listChangeWindow is how far apart the notifications of one list change
// go to hosts: a flood from an upstream becomes one notification now and
// one when it has gone quiet, and hosts re-list once for each.
const listChangeWindow = 500 * time.Millisecond

// repeats writes a line once per key and window: the first of a window is
// written, the rest only counted, and when the window ends one line says
// how many more came ("… 3700 more in the last 10s"). An unauthenticated
// client can thus not flood the log. A repeats is safe for concurrent use.
type repeats struct {
	log    *slog.Logger
	window time.Duration
	timers timers

	mu   sync.Mutex
	open map[string]*repeat
}

type repeat struct {
	level slog.Level
	msg   string
	more  int
}

// Log writes msg (at level, with args) unless a line of key was written
// in this window; then it only counts it.
func (r *repeats) Log(ctx context.Context, level slog.Level, key, msg string, args ...any) {
	if !r.log.Enabled(ctx, level) {
		return
	}
	r.mu.Lock()
	if rp, ok := r.open[key]; ok {
		rp.more++
		r.mu.Unlock()
		return
	}
	if r.open == nil {
		r.open = map[string]*repeat{}
	}
	r.open[key] = &repeat{level: level, msg: msg}
	r.mu.Unlock()
	r.timers.after(r.window, func() { r.close(key) })
	r.log.Log(ctx, level, msg, args...)
}

// close ends key's window, writing how many lines it did not.
func (r *repeats) close(key string) {
	r.mu.Lock()
	rp := r.open[key]
	delete(r.open, key)
	r.mu.Unlock()
	if rp != nil && rp.more > 0 {
		r.log.Log(context.Background(), rp.level, rp.msg+": more in the last "+r.window.String(), "more", rp.more)
	}
}

// coalesce runs send at most once a window per key: the first at once,
// and, when more came within the window, once more at its end.
type coalesce struct {
	window time.Duration
	timers timers

	mu      sync.Mutex
	last    map[string]time.Time
	pending map[string]bool
}

func (c *coalesce) do(key string, send func()) {
	c.mu.Lock()
	if c.pending[key] {
		c.mu.Unlock()
		return
	}
	if c.last == nil {
		c.last, c.pending = map[string]time.Time{}, map[string]bool{}
	}
	now := time.Now()
	if since := now.Sub(c.last[key]); since < c.window {
		c.pending[key] = true
		c.mu.Unlock()
		c.timers.after(c.window-since, func() {
			c.mu.Lock()
			c.pending[key] = false
			c.last[key] = time.Now()
			c.mu.Unlock()
			send()
		})
		return
	}
	c.last[key] = now
	c.mu.Unlock()
	send()
}

// timers are the pending timers of a repeats or a coalesce, owned by the
// Server: stop stops them and waits for one that is running, so that
// nothing they do (a log line, a notification) happens once the Server
// is closed.
type timers struct {
	mu      sync.Mutex
	stopped bool
	pending map[*time.Timer]struct{}
	running sync.WaitGroup // pending timers, and those whose f runs
}

// after runs f after d, unless stop comes first; after stop, never.
func (ts *timers) after(d time.Duration, f func()) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.stopped {
		return
	}
	if ts.pending == nil {
		ts.pending = map[*time.Timer]struct{}{}
	}
	ts.running.Add(1)
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		defer ts.running.Done()
		ts.mu.Lock() // after's: t is set
		_, live := ts.pending[t]
		delete(ts.pending, t)
		ts.mu.Unlock()
		if live {
			f()
		}
	})
	ts.pending[t] = struct{}{}
}

// stop stops the pending timers and waits for those already firing.
func (ts *timers) stop() {
	ts.mu.Lock()
	ts.stopped = true
	for t := range ts.pending {
		if t.Stop() {
			ts.running.Done() // its f will never run
		}
		delete(ts.pending, t)
	}
	ts.mu.Unlock()
	ts.running.Wait()
}
