package ui

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"mcpx/internal/principal"
	"mcpx/internal/sse"
)

//go:embed assets
var assets embed.FS

// minGap is the least time between two updates of one stream: a burst
// of changes (a thousand calls a second) costs the daemon at most this
// many snapshots a second per open page, and the page the newest state.
const minGap = 50 * time.Millisecond

// heartbeat is how often a stream gets a snapshot with nothing changed:
// its times (calls' ages, upstreams' uptimes) and the hosts connected,
// which no observer reports.
const heartbeat = time.Second

// ViewOptions configure a View.
type ViewOptions struct {
	Live *Live
	// Policy is what a principal may do under the current config; nil:
	// the policy without a tool filter. Each route asks the policy of
	// its session's principal (routes.go).
	Policy func(principal.Principal) principal.Policy
	// Cancel and Restart are the CLI's own operations (the local API's):
	// cancel call id with a reason ("user": a person's interrupt), if
	// the policy of the principal ctx carries lets it (CancelCall); and
	// restart a server for the principal ctx carries (the view has
	// decided Operate).
	Cancel  func(ctx context.Context, id uint64, reason string) error
	Restart func(ctx context.Context, server string) error
	// CancelJob is mcpx jobs cancel's operation: cancel job id, its
	// upstream told that the live view did, if the policy of the
	// principal ctx carries lets it (CancelJob).
	CancelJob func(ctx context.Context, id string) error
	// CheckRequest returns the HTTP status and reason a request is
	// refused with for its Host or Origin, as the MCP endpoint on the
	// same listener checks them; 0 admits it.
	CheckRequest func(r *http.Request) (status int, msg string)
	Logger       *slog.Logger
}

// View serves the live view under /ui/.
type View struct {
	opts ViewOptions
	keys keys
	mux  *http.ServeMux
}

// NewView returns the live view.
func NewView(opts ViewOptions) *View {
	v := &View{opts: opts, mux: http.NewServeMux()}
	if v.opts.Logger == nil {
		v.opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if v.opts.Policy == nil {
		v.opts.Policy = func(who principal.Principal) principal.Policy { return principal.NewPolicy(who, nil, "") }
	}
	for _, rt := range v.routes() {
		v.mux.Handle(rt.pattern, v.decided(rt))
	}
	return v
}

// LinkPath returns the path of a new one-time link for who (the
// principal that asked for it: its session acts for who), its token in
// the fragment, which browsers do not send, to be put after the view's
// origin.
func (v *View) LinkPath(who principal.Principal) string { return "/ui/#t=" + v.keys.mint(who) }

// ServeHTTP checks Host and Origin, then routes.
func (v *View) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if v.opts.CheckRequest != nil {
		if status, msg := v.opts.CheckRequest(r); status != 0 {
			http.Error(w, msg, status)
			return
		}
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	v.mux.ServeHTTP(w, r)
}

// login trades a link's token (LinkHeader) for a session key, once,
// for a page of the view's own origin, if the link's principal may open
// the view (Operate).
func (v *View) login(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "forbidden: a session is given to the live view's own page only", http.StatusForbidden)
		return
	}
	who, ok := v.keys.redeem(r.Header.Get(LinkHeader))
	if !ok {
		http.Error(w, "this link was used already or has expired: run `mcpx ui` for a new one", http.StatusForbidden)
		return
	}
	if err := v.opts.Policy(who).Decide(principal.Operate, principal.Target{}); err != nil {
		refuse(w, err)
		return
	}
	session := v.keys.open(who)
	v.opts.Logger.Info("live view opened", "remote", r.RemoteAddr, "principal", who.String())
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"session": session})
}

// action admits requests that change something only from the view's own
// page, and answers their error.
func (v *View) action(fn func(r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r) {
			http.Error(w, "forbidden: actions come from the live view's own page only", http.StatusForbidden)
			return
		}
		if err := fn(r); err != nil {
			status := http.StatusBadRequest
			var se interface{ StatusCode() int }
			if errors.As(err, &se) {
				status = se.StatusCode()
			}
			http.Error(w, err.Error(), status)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func (v *View) cancel(r *http.Request) error {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil {
		return err
	}
	return v.opts.Cancel(r.Context(), id, "user")
}

func (v *View) restart(r *http.Request) error {
	return v.opts.Restart(r.Context(), r.PathValue("name"))
}

func (v *View) cancelJob(r *http.Request) error {
	if v.opts.CancelJob == nil {
		return errors.New("this daemon keeps no jobs")
	}
	return v.opts.CancelJob(r.Context(), r.PathValue("id"))
}

func (v *View) state(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v.opts.Live.Snapshot())
}

// events streams a snapshot at once, then on every change (at most one
// per minGap) and every heartbeat, until the page goes.
func (v *View) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	woken, stop := v.opts.Live.subscribe()
	defer stop()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	gap := time.NewTimer(0)
	defer gap.Stop()
	ctx := r.Context()
	for {
		data, err := json.Marshal(v.opts.Live.Snapshot())
		if err != nil {
			return
		}
		if sse.WriteEvent(w, "", "", data) != nil || rc.Flush() != nil {
			return
		}
		gap.Reset(minGap)
		select {
		case <-ctx.Done():
			return
		case <-v.opts.Live.closed:
			return
		case <-gap.C:
		}
		select {
		case <-ctx.Done():
			return
		case <-v.opts.Live.closed:
			return
		case <-woken:
		case <-tick.C:
		}
	}
}
