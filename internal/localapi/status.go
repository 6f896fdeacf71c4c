package localapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/config"
	"mcpx/internal/oauth"
	"mcpx/internal/principal"
	"mcpx/internal/store"
	"mcpx/internal/upstream"
)

func (h *Handler) serveStatus(w http.ResponseWriter, r *http.Request) error {
	pol := h.policy(r)
	owners, running := map[uint64]string{}, map[string]principal.Target{}
	st := h.status(owners, running)
	return writeJSON(w, statusFor(st, pol, func(id uint64) bool {
		return pol.Allows(principal.ReadCall, principal.Target{Owner: owners[id]})
	}, func(id string) principal.Target { return running[id] }))
}

// Status returns what GET PathStatus answers the local user: the live
// view reads the daemon through it, as mcpx status does.
func (h *Handler) Status() apitype.Status { return h.status(nil, nil) }

// status is the whole status; owners, if not nil, gains each call's
// owner by id, and running what the policy decides each running job by.
func (h *Handler) status(owners map[uint64]string, running map[string]principal.Target) apitype.Status {
	st := apitype.Status{
		PID:       os.Getpid(),
		Version:   h.opts.Version,
		Config:    h.opts.ConfigFile,
		Socket:    h.opts.Socket,
		Started:   h.opts.Started,
		Calls:     []apitype.InFlightCall{},
		Connected: []apitype.ConnectedHost{},
		// Goroutines: what a leak check reads.
		Goroutines: runtime.NumGoroutine(),
	}
	if a := h.opts.Audit; a != nil {
		s := a.Stats()
		st.Audit = &apitype.AuditStats{Written: s.Written, Lost: s.Lost, Failures: s.Failures, Queued: s.Queued, Failing: s.Failing}
	}
	for _, c := range h.catalog.Collisions() {
		st.ToolNameCollisions = append(st.ToolNameCollisions, c.String())
	}
	if h.opts.Hosts != nil {
		st.Hosts = h.opts.Hosts()
	}
	if h.opts.Connected != nil {
		st.Connected = h.opts.Connected()
	}
	if h.opts.HTTP != "" {
		st.HTTP, st.TokenFile = h.opts.HTTP, h.opts.TokenFile
	}
	if h.opts.HTTPSessions != nil {
		st.HTTPSessions = h.opts.HTTPSessions()
	}
	calls := h.relay.Registry().Snapshot()
	inFlight := h.relay.InFlight() // every tool call, jobs' included
	for _, c := range calls {
		call := apitype.InFlightCall{
			ID: c.ID, Host: c.Host.Session, Method: c.Method, Server: c.Server,
			Tool: c.Tool, UpstreamID: c.UpstreamID, Started: c.Started,
		}
		if c.Updates > 0 {
			call.Progress = &apitype.Progress{Progress: c.Progress, Total: c.Total, Message: c.Message}
		}
		if owners != nil {
			owners[c.ID] = c.Owner
		}
		st.Calls = append(st.Calls, call)
	}
	st.Jobs = h.runningJobs(running)
	st.Cluster = h.cluster()
	if h.opts.Jobs != nil {
		l := h.opts.Jobs.Leases()
		st.JobLeases = &apitype.JobLeases{Lost: l.Lost, Renewed: l.Since, SkewMs: l.Skew.Milliseconds(), Exclusive: l.Exclusive}
		if l.Err != nil {
			st.JobLeases.Error = l.Err.Error()
			var gone *store.FileGoneError
			st.JobLeases.FileLost = errors.As(l.Err, &gone)
		}
	}
	st.SignIns = h.signIns()
	if h.opts.Jobs != nil {
		st.JobStoreWrites = h.opts.Jobs.Writes()
	}
	queued := h.relay.Queued()
	for _, s := range h.relay.Pool().Status() {
		st.Upstreams = append(st.Upstreams, apitype.Upstream{
			Name: s.Name, State: s.State, PID: s.PID, Protocol: s.Version, ServerName: s.ServerName,
			Since: s.Since, Starts: s.Starts, InFlight: inFlight[s.Name], Queued: queued[s.Name], Pending: s.Pending + s.HostPending, LastError: s.LastError,
			Eager: s.Eager, Failures: s.Failures, Crashes: s.Crashes, RetryAt: s.RetryAt, PerHost: s.PerHost, HostSessions: s.HostSessions,
		})
	}
	if unconf := h.unconfigured(); len(unconf) > 0 {
		for name, why := range unconf {
			st.Upstreams = append(st.Upstreams, apitype.Upstream{Name: name, State: StateUnconfigured, LastError: why})
		}
		slices.SortFunc(st.Upstreams, func(a, b apitype.Upstream) int { return strings.Compare(a.Name, b.Name) })
	}
	if h.opts.ReloadFailure != nil {
		st.ReloadFailure = h.opts.ReloadFailure()
	}
	h.memory(&st)
	return st
}

// StateUnconfigured is the state status gives a server whose entry in
// the config has a mistake of its own: it does not run, and the other
// servers do.
const StateUnconfigured = "unconfigured"

// unconfigured returns the running config's unconfigured servers and
// why, each reason the field and its mistake (the file is status's own).
func (h *Handler) unconfigured() map[string]string {
	cfg := h.relay.Config()
	if cfg == nil || len(cfg.Unconfigured) == 0 {
		return nil
	}
	out := make(map[string]string, len(cfg.Unconfigured))
	for name, e := range cfg.Unconfigured {
		out[name] = e.Reason()
	}
	return out
}

func (h *Handler) serveTools(w http.ResponseWriter, r *http.Request) error {
	pol := h.policy(r)
	snap := h.catalog.Snapshot(r.Context())
	out := apitype.Tools{Tools: []apitype.Tool{}}
	if unfiltered(pol) {
		out.Errors = snap.Errors // a filtered principal is told of no server it may not use
	}
	if unconf := h.unconfigured(); len(unconf) > 0 && unfiltered(pol) {
		out.Errors = maps.Clone(snap.Errors) // the snapshot's is shared
		if out.Errors == nil {
			out.Errors = map[string]string{}
		}
		for name, why := range unconf {
			out.Errors[name] = "not configured: " + why
		}
	}
	found, err := snap.SearchContext(r.Context(), r.URL.Query().Get("q"), 0)
	if err != nil {
		return statusErr(http.StatusBadRequest, fmt.Errorf("searching tools: %w", err))
	}
	for _, t := range found {
		if !pol.Allows(principal.CallTool, principal.Target{Name: t.Name, Server: t.Server, Tool: t.Tool}) {
			continue
		}
		out.Tools = append(out.Tools, apitype.Tool{
			Name: t.Name, Server: t.Server, Tool: t.Tool, Title: t.Title,
			Description: t.Description, InputSchema: t.InputSchema(),
		})
	}
	if h.opts.MetaTools != nil {
		out.Meta = h.opts.MetaTools()
	}
	return writeJSON(w, out)
}

func (h *Handler) serveShutdown(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Shutdown != nil {
		h.opts.Shutdown()
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

func (h *Handler) serveCancel(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil {
		return statusErr(http.StatusBadRequest, err)
	}
	var req apitype.CancelRequest
	_ = decodeBody(r, &req)
	if err := h.cancelCall(h.policy(r), id, req.Reason); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Cancel cancels call id for the principal ctx carries (the live view's
// button, for its session's principal), as POST PathCancel does, with
// the cause its reason names; the error answers 404 for a call unknown,
// ended or another principal's.
func (h *Handler) Cancel(ctx context.Context, id uint64, reason string) error {
	return h.cancelCall(h.relay.Policy(principal.From(ctx)), id, reason)
}

// cancelCall cancels call id if pol may: another principal's call is
// as unknown to it as one that has ended (404).
func (h *Handler) cancelCall(pol principal.Policy, id uint64, reason string) error {
	owner, ok := h.relay.Registry().Owner(id)
	if !ok {
		return statusErr(http.StatusNotFound, errNoSuchCall)
	}
	if err := pol.Decide(principal.CancelCall, principal.Target{ID: strconv.FormatUint(id, 10), Owner: owner}); err != nil {
		return refusal(err)
	}
	cause := cancelCause(reason)
	if !h.relay.Registry().CancelID(id, cause) {
		return statusErr(http.StatusNotFound, errNoSuchCall)
	}
	h.recordCallCancel(pol, id, owner, cause)
	return nil
}

func (h *Handler) serveRestart(w http.ResponseWriter, r *http.Request) error {
	if err := h.restart(r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Restart restarts upstream server name for the principal ctx carries
// (the live view's button; the view decided Operate), as POST
// PathRestart does, and records it as that route's action is recorded.
func (h *Handler) Restart(ctx context.Context, name string) error {
	start := time.Now()
	err := h.restart(name)
	h.recordAction(principal.From(ctx), "POST "+apitype.PathRestart, name, "the live view", start, err)
	return err
}

// restart restarts upstream server name.
func (h *Handler) restart(name string) error {
	err := h.relay.Pool().Restart(name)
	switch {
	case errors.Is(err, upstream.ErrUnknownServer):
		return statusErr(http.StatusNotFound, err)
	case err != nil:
		return statusErr(http.StatusServiceUnavailable, err)
	}
	h.log.Info("restarting an upstream server", "server", name)
	return nil
}

func (h *Handler) serveUILink(w http.ResponseWriter, r *http.Request) error {
	if h.opts.UILink == nil {
		return statusErr(http.StatusNotImplemented, errors.New("this daemon serves no live view"))
	}
	url, err := h.opts.UILink(principal.From(r.Context()))
	if err != nil {
		return err
	}
	return writeJSON(w, apitype.UILink{URL: url})
}

func (h *Handler) serveReload(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Reload == nil {
		return statusErr(http.StatusNotImplemented, errors.New("this daemon cannot reload its config"))
	}
	var req apitype.ReloadRequest
	if err := decodeBody(r, &req); err != nil && !errors.Is(err, io.EOF) {
		return statusErr(http.StatusBadRequest, fmt.Errorf("reading reload request: %w", err))
	}
	res, err := h.opts.Reload(req.Env)
	if err != nil {
		return statusErr(http.StatusBadRequest, err)
	}
	return writeJSON(w, res)
}

// signIns returns the sign-in of each HTTP server of the current config,
// by name.
func (h *Handler) signIns() []apitype.SignIn {
	cfg := h.relay.Config()
	if h.opts.OAuth == nil || cfg == nil {
		return nil
	}
	// The shared store may be slow or down: status answers regardless.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out []apitype.SignIn
	for name, s := range cfg.Servers {
		if s.Transport == config.TransportStdio {
			continue
		}
		st := oauth.StateOf(ctx, h.opts.OAuth, name, s.URL)
		si := apitype.SignIn{Server: name, State: st.State, SignedIn: st.SignedIn, Expiry: st.Expiry, Refreshable: st.Refreshable, Refused: st.Refused}
		if st.Err != nil {
			si.Error = st.Err.Error()
		}
		if h.opts.RefreshFailing != nil {
			if f, ok := h.opts.RefreshFailing(name); ok {
				si.RefreshFailing = &apitype.RefreshFailing{Failures: f.Failures, Error: f.Err, Next: f.Next}
			}
		}
		out = append(out, si)
	}
	slices.SortFunc(out, func(a, b apitype.SignIn) int { return strings.Compare(a.Server, b.Server) })
	return out
}

// unfiltered reports whether pol has no tool filter: only such a
// principal is told of servers by name when they are not running.
func unfiltered(pol principal.Policy) bool {
	f, _ := pol.Tools()
	return f == nil
}
