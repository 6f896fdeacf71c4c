package daemon

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"mcpx/internal/sock"
)

// activity tracks what keeps the daemon busy: connected host streams and
// API requests. It also owns the host-stream goroutines' lifetimes: after
// close, no new host is admitted and close waits for the ones in flight.
type activity struct {
	mu      sync.Mutex
	nHosts  int
	nReqs   int
	last    time.Time
	closing bool
	wg      sync.WaitGroup
}

func newActivity() *activity { return &activity{last: time.Now()} }

// hostIn admits a host stream; false once the daemon is closing.
func (a *activity) hostIn() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closing {
		return false
	}
	a.nHosts++
	a.wg.Add(1)
	return true
}

func (a *activity) hostOut() {
	a.mu.Lock()
	a.nHosts--
	a.last = time.Now()
	a.mu.Unlock()
	a.wg.Done()
}

func (a *activity) hosts() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.nHosts
}

// close refuses new hosts and waits for those connected to finish.
func (a *activity) close() {
	a.mu.Lock()
	a.closing = true
	a.mu.Unlock()
	a.wg.Wait()
}

// track counts API requests as activity.
func (a *activity) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.nReqs++
		a.mu.Unlock()
		defer func() {
			a.mu.Lock()
			a.nReqs--
			a.last = time.Now()
			a.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}

// idleSince returns since when nothing has been going on, or false if
// something is.
func (a *activity) idleSince(inFlight func() int) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.nHosts > 0 || a.nReqs > 0 || inFlight() > 0 {
		return time.Time{}, false
	}
	return a.last, true
}

// idleWatch fires once the daemon has been idle for its interval.
type idleWatch struct {
	fired chan struct{}
	quit  chan struct{}
	done  chan struct{}
}

// quietAfter is how long nothing goes on before the daemon's idle
// callback runs (Options.Idle).
const quietAfter = 10 * time.Second

// idleTimer starts watching. It fires once nothing has gone on for d
// (d <= 0: never), or as soon as nothing goes on if stale reports true: the
// daemon's executable was deleted or replaced (a rebuild, a `go run` that
// has ended), so no client of this build will come back. Before that,
// quiet (if not nil) runs once each time nothing has gone on for
// quietAfter.
func (a *activity) idleTimer(d time.Duration, inFlight func() int, stale func() bool, quiet func()) *idleWatch {
	w := &idleWatch{fired: make(chan struct{}), quit: make(chan struct{}), done: make(chan struct{})}
	tick := 2 * time.Second
	if d > 0 {
		tick = min(max(d/4, 10*time.Millisecond), tick)
	}
	go func() {
		defer close(w.done)
		t := time.NewTicker(tick)
		defer t.Stop()
		var quieted time.Time // the idle period quiet last ran in
		for {
			select {
			case <-w.quit:
				return
			case <-t.C:
				since, idle := a.idleSince(inFlight)
				if idle && (d > 0 && time.Since(since) >= d || stale()) {
					close(w.fired)
					return
				}
				if idle && quiet != nil && !since.Equal(quieted) && time.Since(since) >= quietAfter {
					quieted = since
					quiet()
				}
			}
		}
	}()
	return w
}

func (w *idleWatch) stop() {
	select {
	case <-w.quit:
	default:
		close(w.quit)
	}
	<-w.done
}

// peerCheckListener drops connections from other users.
type peerCheckListener struct {
	net.Listener
	log *slog.Logger
}

func (l *peerCheckListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if err := sock.CheckPeer(c); err != nil {
			l.log.Warn("refused a connection", "err", err)
			c.Close()
			continue
		}
		return c, nil
	}
}
