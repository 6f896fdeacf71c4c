package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/supervise"
)

// ErrUnknownServer is returned for a server name the config does not have.
var ErrUnknownServer = errors.New("unknown server")

// ErrClosed is returned once the pool is shutting down.
var ErrClosed = errors.New("mcpx is stopping")

// Options configure a Pool. The zero value is usable.
type Options struct {
	Logger          *slog.Logger
	ClientInfo      mcp.Implementation // what mcpx calls itself upstream
	MaxMessageBytes int
	ProbeTimeout    time.Duration // default 3s
	StopGrace       time.Duration // per shutdown step; default 2s
	// OnToolsChanged is told, without blocking, when the tools of a server
	// may have changed: it said so (notifications/tools/list_changed, with
	// its name), or a reload added, removed or changed servers (once, "").
	OnToolsChanged func(server string)
	// OnNotify is told, without blocking and on the upstream's reader
	// goroutine, of every other notification of an upstream but progress
	// and cancellation: resources and prompts list changes, resource
	// updates, log messages.
	OnNotify func(server string, msg *jsonrpc.Message)
	// OnHostMessage is told, as OnNotify, of the log messages
	// (notifications/message) of a perHost server's session of one host,
	// whose key it is given: they are that host's alone. Such a session's
	// resource updates are dropped (subscriptions live on the shared
	// session); its list changes go to OnNotify and OnToolsChanged.
	OnHostMessage func(server, host string, msg *jsonrpc.Message)
	// Supervision says how stdio upstreams run; nil starts them directly.
	Supervision *supervise.Options
	// Observer, if set, is told of starts, failed starts and crashes
	// (observe.go).
	Observer Observer
	// Authorize, when set, wraps the round tripper of each HTTP server's
	// requests (the server's sign-in: internal/oauth): the shared one when
	// person is "", else, on a per-person server, that principal's own. A
	// server whose config sets an Authorization header is left as it is.
	Authorize func(srv *config.Server, person string, base http.RoundTripper) http.RoundTripper
}

// Pool keeps at most one live session per configured server, started on
// first use (eager servers: when the pool runs) and restarted on the next
// use after it ends (eager servers: at once). A server that fails to start,
// or crashes soon after it started, again and again, is restarted after an
// exponentially growing wait (see lifecycle.go). While Run runs, a server
// with an idle stop is stopped once it has gone that long without a
// request in flight.
type Pool struct {
	opts Options
	log  *slog.Logger
	wg   sync.WaitGroup
	http *httpShared

	mu      sync.Mutex
	entries map[string]*entry
	eras    map[string]string // settled revision per server, reused on restart
	closed  bool
	stop    chan struct{} // closed when shutdown begins
}

// entry is one server's place in the pool: its config and its session,
// live or starting, with the start and crash state that paces restarts.
// A perHost server's hosts have entries of their own under it.
type entry struct {
	cfg *config.Server
	// retired is set when a reload removed or replaced the entry, or its
	// host left: a start still under way for it stops the session it
	// made, and fails with retiredWhy.
	retired    bool
	retiredWhy error
	// failures counts starts that failed in a row; the next start waits
	// until retryAt, so that a broken server is not respawned by every
	// call and listing (exponential backoff, capped).
	failures int
	retryAt  time.Time
	// crashes counts sessions in a row that ended on their own within
	// crashWindow of their start; an eager server waits until
	// crashRetryAt to start again (see lifecycle.go).
	crashes      int
	crashRetryAt time.Time
	// touched is when the session was last handed out or seen busy, for
	// the idle stop; idleTools are its tools, kept when it was stopped for
	// being idle, so that listing a stopped server does not start it.
	touched time.Time
	busy    bool // it had requests in flight at the last look
	// caps are the capabilities of its last session that started, kept
	// across its stops (see Pool.Capabilities).
	caps      json.RawMessage
	idleTools []Tool
	sess      *Session
	starting  *attempt
	starts    int
	up        bool // a session of it has started (for Observer's restart)
	lastErr   error
	lastEnd   time.Time
	// hosts are the sessions of a perHost server's hosts, by host key
	// (perhost.go): entries of their own, for the same server, that no
	// listing uses; host is that key on such an entry, "" on the shared one.
	hosts map[string]*entry
	host  string
	// person is, on a per-person server's entry of one principal
	// (person.go), that principal's ID: its session carries their own
	// sign-in.
	person string
}

type attempt struct {
	done chan struct{}
	sess *Session
	err  error
}

// NewPool returns a pool for the enabled servers of cfg.
func NewPool(cfg *config.Config, opts *Options) *Pool {
	p := &Pool{entries: map[string]*entry{}, eras: map[string]string{}, stop: make(chan struct{}), http: newHTTPShared()}
	if opts != nil {
		p.opts = *opts
	}
	p.http.authorize = p.opts.Authorize
	if p.opts.Logger == nil {
		p.opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if p.opts.ClientInfo.Name == "" {
		p.opts.ClientInfo = mcp.Implementation{Name: "mcpx", Version: "dev"}
	}
	if p.opts.ProbeTimeout <= 0 {
		p.opts.ProbeTimeout = 3 * time.Second
	}
	if p.opts.StopGrace <= 0 {
		p.opts.StopGrace = 2 * time.Second
	}
	p.log = p.opts.Logger
	for name, srv := range cfg.Servers {
		if srv.Disabled {
			continue
		}
		p.entries[name] = &entry{cfg: srv}
	}
	return p
}

// Names returns the pool's server names, sorted.
func (p *Pool) Names() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.namesLocked()
}

// Has reports whether name is one of Names, without listing them.
func (p *Pool) Has(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.entries[name] != nil
}

func (p *Pool) namesLocked() []string {
	names := make([]string, 0, len(p.entries))
	for n := range p.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Session returns the live session of server name, starting it if needed.
// The start itself is not bound to ctx (other callers may share it); ctx
// only bounds how long this caller waits.
func (p *Pool) Session(ctx context.Context, name string) (*Session, error) {
	return p.SessionFor(ctx, name, "")
}

// sessionLocked returns the live session of en, or the start to wait for
// (begun if need be), or why none may start now. p.mu is held.
func (p *Pool) sessionLocked(en *entry) (*Session, *attempt, error) {
	if s := en.sess; s != nil {
		if s.Err() == nil {
			en.touched = time.Now()
			return s, nil, nil
		}
		// Its connection has failed (the upstream exited or closed its
		// output), but the session is still winding down, which may take
		// the stop grace: every call on it would fail with the old error.
		// Start a new one now, and see that the old one ends.
		p.endedLocked(en, s)
		p.wg.Add(1)
		go func() { defer p.wg.Done(); s.stop() }()
	}
	a := en.starting
	if a == nil && en.failures > 0 && time.Now().Before(en.retryAt) {
		return nil, nil, fmt.Errorf("%w (failed %d time(s) in a row; next try in %s)", en.lastErr, en.failures,
			time.Until(en.retryAt).Round(100*time.Millisecond))
	}
	if a == nil {
		a = p.startLocked(en)
	}
	return nil, a, nil
}

// await waits for the start a, as long as ctx lives.
func await(ctx context.Context, a *attempt) (*Session, error) {
	select {
	case <-a.done:
		return a.sess, a.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// startLocked begins a start of en's server.
func (p *Pool) startLocked(en *entry) *attempt {
	a := &attempt{done: make(chan struct{})}
	en.starting = a
	en.starts++
	p.wg.Add(1)
	go p.start(en, a, p.eras[en.cfg.Name])
	return a
}

// start dials en's server under its startup timeout and records the result.
func (p *Pool) start(en *entry, a *attempt, era string) {
	defer p.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	if d := en.cfg.StartupTimeout; d > 0 { // 0: no timer
		ctx, cancel = context.WithTimeoutCause(context.Background(), d,
			fmt.Errorf("upstream %q did not finish starting within %s", en.cfg.Name, d))
	}
	defer cancel()
	p.wg.Add(1)
	go func() { // shutdown cuts a start short
		defer p.wg.Done()
		select {
		case <-p.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	s, err := dial(ctx, en.cfg, dialOptions{
		log:          p.log,
		clientInfo:   p.opts.ClientInfo,
		maxMessage:   p.opts.MaxMessageBytes,
		probeTimeout: p.opts.ProbeTimeout,
		grace:        p.opts.StopGrace,
		era:          era,

		onToolsChanged: p.opts.OnToolsChanged,
		onNotify:       p.notifier(en),
		http:           p.http,
		person:         en.person,
		sup:            p.opts.Supervision,
	}, &p.wg)

	p.mu.Lock()
	en.starting = nil
	a.sess, a.err = s, err
	if err != nil {
		en.lastErr, en.lastEnd = err, time.Now()
		if !needsSignIn(err) { // a sign-in is the user's to do: then at once
			en.failures++
			en.retryAt = time.Now().Add(startBackoff(en.failures))
		}
		// The cached revision may be what failed (a server upgraded to
		// another era): probe afresh next time.
		delete(p.eras, en.cfg.Name)
		if o := p.opts.Observer; o != nil {
			o.UpstreamStartFailed(en.cfg.Name, err)
		}
	} else if p.closed || en.retired {
		a.sess, a.err = nil, ErrClosed
		if en.retired {
			a.err = fmt.Errorf("server %q was changed or removed while it started", en.cfg.Name)
			if en.retiredWhy != nil {
				a.err = en.retiredWhy
			}
		}
		p.mu.Unlock()
		close(a.done)
		s.stop()
		return
	} else {
		en.sess = s
		en.caps = s.capabilities
		en.failures = 0
		en.touched = time.Now()
		en.idleTools = nil
		p.eras[en.cfg.Name] = s.version
		if o := p.opts.Observer; o != nil {
			o.UpstreamStarted(en.cfg.Name, en.up)
		}
		en.up = true
		p.wg.Add(1)
		go p.watch(en, s)
	}
	p.mu.Unlock()
	close(a.done)
}

// watch clears an entry whose session ended, so the next use restarts it.
func (p *Pool) watch(en *entry, s *Session) {
	defer p.wg.Done()
	<-s.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	if en.sess == s {
		p.endedLocked(en, s)
	}
}

// Run starts the eager servers and keeps them running, stops idle ones
// (see lifecycle.go) until ctx ends, then stops every session and returns
// once all of the pool's processes and goroutines have ended. Nothing but
// ctx ends it, so it returns no error.
func (p *Pool) Run(ctx context.Context) {
	p.tend(ctx)
	p.mu.Lock()
	p.closed = true
	close(p.stop)
	var live []*Session
	for _, en := range p.entries {
		for _, h := range en.withHosts() {
			if h.sess != nil {
				live = append(live, h.sess)
			}
		}
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range live {
		wg.Add(1)
		go func() { defer wg.Done(); s.stop() }()
	}
	wg.Wait()
	p.wg.Wait()
	p.http.close()
}

// ReloadResult says what a reload changed, by server name.
type ReloadResult struct {
	Added, Removed, Changed, Unchanged []string
}

// Reload applies a new config: servers it adds are started on first use;
// servers it removes or changes are stopped, their calls in flight ending
// with an error that says so; unchanged servers, and their calls, are not
// touched.
func (p *Pool) Reload(cfg *config.Config) ReloadResult {
	var res ReloadResult
	want := map[string]*config.Server{}
	for name, srv := range cfg.Servers {
		if !srv.Disabled {
			want[name] = srv
		}
	}
	type stopping struct {
		s   *Session
		why error
	}
	var stops []stopping
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return res
	}
	for _, name := range p.namesLocked() {
		en := p.entries[name]
		nc, keep := want[name]
		if keep && en.cfg.SameUpstream(nc) { // call limits apply per call, in the relay
			res.Unchanged = append(res.Unchanged, name)
			continue
		}
		// Stopped by mcpx, not crashed: an ErrStopped.
		var why error = &stoppedError{fmt.Sprintf("server %q was removed from the config", name)}
		if keep {
			why = &stoppedError{fmt.Sprintf("server %q was changed in the config", name)}
			res.Changed = append(res.Changed, name)
			p.entries[name] = &entry{cfg: nc}
		} else {
			res.Removed = append(res.Removed, name)
			delete(p.entries, name)
		}
		delete(p.eras, name)
		for _, h := range en.withHosts() {
			h.retired, h.retiredWhy = true, why
			if h.sess != nil {
				stops = append(stops, stopping{h.sess, why})
			}
		}
	}
	for name, nc := range want {
		if _, ok := p.entries[name]; !ok {
			p.entries[name] = &entry{cfg: nc}
			res.Added = append(res.Added, name)
		}
	}
	for _, st := range stops {
		p.wg.Add(1)
		go func() { defer p.wg.Done(); st.s.stopWith(st.why) }()
	}
	p.mu.Unlock()
	sort.Strings(res.Added)
	if f := p.opts.OnToolsChanged; f != nil && len(res.Added)+len(res.Removed)+len(res.Changed) > 0 {
		f("") // once for the whole reload
	}
	return res
}
