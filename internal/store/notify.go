package store

import (
	"context"
	"sync"
)

// CancelWatcher is a store that tells of the cancels made through it, by
// whichever gateway made them: a gateway running a job that another
// cancelled hears of it at once and ends the call. A store shared by
// several gateways implements it across them (PostgreSQL's NOTIFY);
// the embedded store within its process.
type CancelWatcher interface {
	// WatchCancels calls fn with the id of each job cancelled from now
	// until ctx ends, and the reason the cancel wrote (Job.Error), then
	// returns nil. fn runs on WatchCancels's
	// goroutine and must not block. When the store loses its link to its
	// server and regains it, it calls fn with the ids of the jobs
	// cancelled meanwhile too (an id may come twice).
	WatchCancels(ctx context.Context, fn func(id, why string)) error
}

// cancels fans the cancels of one process out to its watchers.
type cancels struct {
	mu       sync.Mutex
	watchers map[*func(string, string)]struct{}
}

func (c *cancels) tell(id, why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for fn := range c.watchers {
		(*fn)(id, why)
	}
}

func (c *cancels) watch(ctx context.Context, fn func(id, why string)) error {
	c.mu.Lock()
	if c.watchers == nil {
		c.watchers = map[*func(string, string)]struct{}{}
	}
	key := &fn
	c.watchers[key] = struct{}{}
	c.mu.Unlock()
	<-ctx.Done()
	c.mu.Lock()
	delete(c.watchers, key)
	c.mu.Unlock()
	return nil
}
