package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"mcpx/internal/config"
)

// SignIns are the sign-ins the daemon starts on a host's behalf: a host
// that can open a URL for its user (URL-mode elicitation) is handed the
// authorization URL of a flow the daemon runs, whose redirect comes back
// to the daemon's loopback listener, exactly as with mcpx login. At most
// one runs per server; a host asking again while it runs gets the same
// URL. Close cancels the ones running and waits for them.
type SignIns struct {
	Store   Records
	HTTP    *http.Client  // nil: http.DefaultClient
	Timeout time.Duration // how long one waits for the user; 0: 5 minutes
	Log     *slog.Logger
	// Ended, if set, is told of each sign-in's end: err is nil when it
	// completed (the audit log).
	Ended func(server string, err error)

	mu      sync.Mutex
	closed  bool
	running map[string]*pendingSignIn
	wg      sync.WaitGroup
}

type pendingSignIn struct {
	url    string        // set before ready is closed
	ready  chan struct{} // closed once url is known, or the sign-in failed
	cancel context.CancelFunc
}

// ErrSignInsClosed: the daemon is stopping.
var ErrSignInsClosed = errors.New("mcpx is stopping")

// urlWait bounds how long Begin waits for discovery and registration to
// yield the authorization URL.
const urlWait = 30 * time.Second

// Begin returns the authorization URL of a sign-in to srv, starting one
// unless one is under way.
func (s *SignIns) Begin(srv *config.Server) (string, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return "", ErrSignInsClosed
	}
	if p := s.running[srv.Name]; p != nil {
		s.mu.Unlock()
		select {
		case <-p.ready:
			if p.url == "" {
				return "", fmt.Errorf("signing in to %q failed; try again", srv.Name)
			}
			return p.url, nil
		case <-time.After(urlWait):
			return "", fmt.Errorf("signing in to %q: no authorization URL within %s", srv.Name, urlWait)
		}
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	p := &pendingSignIn{cancel: cancel, ready: make(chan struct{})}
	if s.running == nil {
		s.running = map[string]*pendingSignIn{}
	}
	s.running[srv.Name] = p
	s.wg.Add(1)
	s.mu.Unlock()

	failed := make(chan error, 1)
	var once sync.Once
	go func() {
		defer s.wg.Done()
		defer cancel()
		err := s.run(ctx, srv, func(_ context.Context, u string) error {
			once.Do(func() { p.url = u; close(p.ready) })
			return nil
		})
		once.Do(func() { close(p.ready) })
		s.mu.Lock()
		delete(s.running, srv.Name)
		s.mu.Unlock()
		failed <- err
	}()
	select {
	case <-p.ready:
		if p.url != "" {
			return p.url, nil
		}
		err := <-failed
		if err == nil {
			err = errors.New("the sign-in ended without an authorization URL")
		}
		return "", err
	case err := <-failed:
		if err == nil {
			err = errors.New("the sign-in ended without an authorization URL")
		}
		return "", err
	case <-time.After(urlWait):
		cancel()
		return "", fmt.Errorf("signing in to %q: no authorization URL within %s", srv.Name, urlWait)
	}
}

func (s *SignIns) run(ctx context.Context, srv *config.Server, browser Browser) error {
	prev, err := s.Store.Load(ctx, srv.Name)
	if err != nil || prev.ServerURL != srv.URL {
		prev = nil
	}
	c := &Client{HTTP: s.HTTP}
	_, err = c.SignIn(ctx, LoginRequest{Server: srv.Name, URL: srv.URL, Settings: SettingsOf(srv.OAuth), Previous: prev, Browser: browser},
		func(r *Record) error { return s.Store.Save(ctx, r) })
	if s.Ended != nil {
		s.Ended(srv.Name, err)
	}
	if s.Log != nil {
		if err != nil {
			s.Log.Info("a sign-in started for a host did not complete", "server", srv.Name, "err", err)
		} else {
			s.Log.Info("signed in to the server for a host", "server", srv.Name)
		}
	}
	return err
}

// Close cancels the sign-ins under way and waits for them to end.
func (s *SignIns) Close() {
	s.mu.Lock()
	s.closed = true
	for _, p := range s.running {
		p.cancel()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
