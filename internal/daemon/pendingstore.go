package daemon

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"mcpx/internal/store"
)

// Backoff of the tries to open a shared store that did not answer at
// start: from the first to the last, doubling.
const (
	reopenFirst = time.Second
	reopenLast  = 30 * time.Second
)

// pendingStore is the shared job store of a replica whose PostgreSQL did
// not answer at start. It tries to open it again, with backoff, until it
// answers or Close is called; until then every use fails as during an
// outage of the store (with a store.UnavailableError), so the replica serves
// what needs no store and says why the rest fails, and once it is open
// every use goes to it. It says in the log when the reason it cannot
// open the store changes, not at each try.
type pendingStore struct {
	url     string
	log     *slog.Logger
	opened  func(*store.Postgres) // once, before any use goes to it
	backoff func(try int) time.Duration

	ready chan struct{} // closed once st is open
	st    *store.Postgres
	mu    sync.Mutex
	err   error // why the last try failed
	stop  context.CancelFunc
	done  chan struct{}
}

// newPendingStore starts trying to open url again; err is why the first
// try failed.
func newPendingStore(url string, err error, log *slog.Logger, opened func(*store.Postgres)) *pendingStore {
	ctx, stop := context.WithCancel(context.Background())
	p := &pendingStore{url: url, log: log, opened: opened, backoff: reopenBackoff,
		ready: make(chan struct{}), err: err, stop: stop, done: make(chan struct{})}
	go p.run(ctx)
	return p
}

func reopenBackoff(try int) time.Duration {
	d := reopenFirst << min(try, 10)
	return min(d, reopenLast)
}

// retryable reports whether an open that failed with err may succeed
// later: the server did not answer, as opposed to a config it refuses.
func retryable(err error) bool {
	var u *store.UnavailableError
	return errors.As(err, &u)
}

func (p *pendingStore) run(ctx context.Context) {
	defer close(p.done)
	for try := 0; ; try++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(p.backoff(try)):
		}
		octx, cancel := context.WithTimeout(ctx, openTimeout)
		st, err := store.OpenPostgres(octx, p.url)
		cancel()
		if err == nil {
			p.opened(st)
			p.st = st
			close(p.ready)
			p.log.Info("job store: PostgreSQL answers now; this replica takes jobs", "store", store.Redact(p.url), "tries", try+2)
			return
		}
		if ctx.Err() != nil {
			return
		}
		p.mu.Lock()
		changed := p.err == nil || p.err.Error() != err.Error()
		p.err = err
		p.mu.Unlock()
		if changed {
			p.log.Warn("no jobs yet: the shared job store still cannot be opened; trying again", "store", store.Redact(p.url), "err", err)
		}
		if !retryable(err) {
			p.log.Error("no jobs: the shared job store refuses this replica; not trying again", "store", store.Redact(p.url), "err", err)
			return
		}
	}
}

// get returns the store once it is open, else why it is not.
func (p *pendingStore) get() (*store.Postgres, error) {
	select {
	case <-p.ready:
		return p.st, nil
	default:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return nil, &notOpenError{p.err}
}

// notOpenError: the store has not answered since this replica started;
// it wraps why (a store.UnavailableError while it is tried again).
type notOpenError struct{ err error }

func (e *notOpenError) Error() string {
	return "not opened since this mcpx started, trying again: " + e.err.Error()
}
func (e *notOpenError) Unwrap() error { return e.err }

// Close stops the tries, and closes the store if one opened.
func (p *pendingStore) Close() error {
	p.stop()
	<-p.done
	select {
	case <-p.ready:
		return p.st.Close()
	default:
		return nil
	}
}
