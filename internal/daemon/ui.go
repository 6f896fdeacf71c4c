package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"

	"mcpx/internal/apitype"
	"mcpx/internal/hosthttp"
	"mcpx/internal/localapi"
	"mcpx/internal/principal"
	"mcpx/internal/ui"
	"mcpx/internal/upstream"
)

// observing is what the daemon shows of itself: metrics, the live view
// and the observer feeding both. Its view is served on the HTTP listener
// when there is one, else on a loopback listener of its own, started
// when the first link is asked for and closed when the daemon stops.
type observing struct {
	log     *slog.Logger
	metrics *ui.Metrics
	live    *ui.Live
	obs     *ui.Observer
	act     *activity
	api     *localapi.Handler                          // set before anything is served
	policy  func(principal.Principal) principal.Policy // the relay's, set with api

	mu      sync.Mutex
	view    *ui.View
	base    string       // the view's origin: http://host:port
	srv     *http.Server // the loopback listener's; nil on the HTTP listener
	served  chan error
	stopped bool
}

func newObserving(log *slog.Logger, act *activity) *observing {
	o := &observing{log: log, act: act}
	status := func() apitype.Status { return o.api.Status() }
	o.metrics = ui.NewMetrics(status)
	o.live = ui.NewLive(status)
	o.obs = ui.NewObserver(o.metrics, o.live)
	return o
}

// labelFrom makes the metrics label only the servers pool has and the
// tools they listed.
func (o *observing) labelFrom(pool *upstream.Pool) {
	o.metrics.LabelOnly(func(server, tool string) (bool, bool) {
		if !pool.Has(server) {
			return false, false
		}
		return true, tool != "" && pool.Listed(server, tool)
	})
}

// newView returns the live view for a listener bound to addr.
func (o *observing) newView(addr string) *ui.View {
	return o.newViewChecked(hosthttp.Access{Addr: addr}.CheckBrowser)
}

// newViewChecked returns the live view whose browsers' requests check
// admits.
func (o *observing) newViewChecked(check func(*http.Request) (int, string)) *ui.View {
	return ui.NewView(ui.ViewOptions{
		Live: o.live, Policy: o.policy, Cancel: o.api.Cancel, Restart: o.api.Restart, Logger: o.log,
		CancelJob: func(ctx context.Context, id string) error {
			_, err := o.api.CancelJob(ctx, id, "the live view")
			return err
		},
		CheckRequest: check,
	})
}

// onHTTP serves the view on the HTTP listener at addr: mux gains /ui/,
// and /metrics behind access, to the principals the policy lets read it.
// The view's browsers pass access's Host and Origin rules (its
// allowedHosts too); its links are on publicURL when set (a load
// balancer's, which people's browsers reach), else on addr.
func (o *observing) onHTTP(mux *http.ServeMux, addr string, access hosthttp.Access, publicURL string) {
	o.view = o.newViewChecked(access.CheckBrowser)
	o.base = "http://" + linkHost(addr)
	if publicURL != "" {
		o.base = publicURL
	}
	mux.Handle("/ui/", o.view)
	mux.Handle(apitype.PathMetrics, access.Guard(o.api.Decided(principal.ReadMetrics, o.metrics.Handler())))
}

// link mints a one-time link to the view for who (its session acts for
// who), starting its loopback listener first if it has none.
func (o *observing) link(who principal.Principal) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return "", errors.New("the daemon is stopping")
	}
	if o.view == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		addr := ln.Addr().String()
		o.view, o.base = o.newView(addr), "http://"+addr
		guard := newConnGuard(false) // a browser's: bounded, not sorted by trust
		o.srv = httpServer(o.act.track(o.view), o.log, guard)
		o.served = make(chan error, 1)
		go func() { o.served <- o.srv.Serve(guard.Listener(ln)) }()
		o.log.Info("serving the live view", "url", o.base+"/ui/")
	}
	return o.base + o.view.LinkPath(who), nil
}

// stop closes the loopback listener, if one was started, and waits for
// it.
func (o *observing) stop(ctx context.Context) {
	o.mu.Lock()
	o.stopped = true
	srv := o.srv
	o.mu.Unlock()
	if srv == nil {
		return
	}
	if srv.Shutdown(ctx) != nil {
		srv.Close()
	}
	<-o.served
}

// linkHost is the host:port a browser on this machine reaches addr at:
// a loopback address for a listener on every interface.
func linkHost(addr string) string {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsUnspecified() {
		if ip.To4() != nil {
			h = "127.0.0.1"
		} else {
			h = "::1"
		}
	}
	return net.JoinHostPort(h, p)
}
