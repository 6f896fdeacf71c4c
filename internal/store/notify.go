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
	// until ctx ends, then returns nil. fn runs on WatchCancels's
	// goroutine and must not block. When the store loses its link to its
	// server and regains it, it calls fn with the ids of the jobs
	// cancelled meanwhile too (an id may come twice).
	WatchCancels(ctx context.Context, fn func(id string)) error
}

// cancels fans the cancels of one process out to its watchers.
type cancels struct {
	mu       sync.Mutex
	watchers map[*func(string)]struct{}
}

func (c *cancels) tell(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for fn := range c.watchers {
		(*fn)(id)
	}
}

func (c *cancels) watch(ctx context.Context, fn func(id string)) error {
	c.mu.Lock()
	if c.watchers == nil {
		c.watchers = map[*func(string)]struct{}{}
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
