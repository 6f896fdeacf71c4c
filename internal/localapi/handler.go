// Package localapi is the daemon's JSON API. /v1 is the stable API for
// integrations (status, tools, streamed calls, cancel; routes.go marks
// them and docs/api/v1.json describes them, a test keeping the two
// together), served on the socket and, through V1, on the HTTP listener
// behind its token. /v0 is the CLI's own: status, tool
// listing and search, streamed tool calls, cancellation, server restarts,
// links to the live view, shutdown, and the upgrade that carries a host's
// stdio MCP stream to the daemon. Status, Cancel and Restart are also
// methods, the live view's only way to read and act. Handlers are
// func(w, r) error behind one wrapper and one route table; the wire types
// are package apitype's.
//
// The API is served on a unix socket (mode 0600). The wrapper also refuses
// any request a browser could have sent (an Origin or Referer header, or a
// foreign Host) and checks that the peer runs as this user. /mcp, the MCP
// endpoint (Streamable HTTP, served by the handler in Options.MCP, which
// refuses Origin and Referer itself), admits any Host: MCP clients send the
// host of the URL they were given, a browser cannot reach a unix socket (a
// page relayed to it by a local proxy still sends Origin on a POST), and a
// request without Origin can only be a GET (answered 405) or come from a
// program of this user, whom the socket admits anyway. /metrics, the
// Prometheus page of Options.Metrics, admits any Host too (a scraper
// sends its URL's), and no browser.
//
// Concurrency: a Handler is safe for concurrent use.
package localapi

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/audit"
	"mcpx/internal/catalog"
	"mcpx/internal/codemode"
	"mcpx/internal/jobs"
	"mcpx/internal/oauth"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
	"mcpx/internal/store"
)

// Options configure a Handler.
type Options struct {
	// Jobs serves the job API and the status's jobs; nil: none.
	Jobs *jobs.Manager
	// Sandbox returns the process ids of the warm sandbox children, for
	// the status's memory; nil: none.
	Sandbox    func() []int
	Logger     *slog.Logger
	Version    string
	ConfigFile string
	Socket     string
	Started    time.Time
	// ServeHost serves a host's MCP stream on an upgraded connection and
	// returns when the host has gone; it owns and closes conn.
	ServeHost func(conn io.ReadWriteCloser) error
	// Hosts returns how many host streams are connected.
	Hosts func() int
	// Connected lists the connected hosts with their profiles.
	Connected func() []apitype.ConnectedHost
	// MCP serves MCP over Streamable HTTP at apitype.PathMCP; nil: 404.
	MCP http.Handler
	// HTTP is the MCP endpoint's URL on TCP ("" for none) and TokenFile
	// the file of the token it requires, for status; HTTPSessions counts
	// the open HTTP sessions.
	HTTP         string
	TokenFile    string
	HTTPSessions func() int
	// Shutdown asks the daemon to stop.
	Shutdown func()
	// Reload re-reads the config file, expanding it with the ${VAR}
	// values env gives over the daemon's environment; ReloadFailure says
	// why the latest reload failed, nil after a good one.
	Reload        func(env map[string]string) (apitype.ReloadResult, error)
	ReloadFailure func() *apitype.ReloadFailure
	// Metrics serves the Prometheus metrics page at apitype.PathMetrics;
	// nil: 404.
	Metrics http.Handler
	// MetaTools lists mcpx's own tools for GET PathV1Tools (mcpx_exec,
	// run by PathV1Exec); nil: none.
	MetaTools func() []apitype.Tool
	// UILink mints a one-time link to the live view for who (the
	// request's principal: its session acts for who); nil: none is
	// served.
	UILink func(who principal.Principal) (string, error)
	// Scripts runs scripts (PathExec); nil: 404.
	Scripts *codemode.Engine
	// OAuth holds the HTTP servers' sign-ins, shown in Status; nil: none.
	OAuth oauth.Records
	// RefreshFailing says whether a server's background refresh is
	// failing, shown in Status; nil: none is.
	RefreshFailing func(server string) (oauth.RefreshFailure, bool)
	// Audit is the audit log the operator's actions are recorded in, and
	// AuditStore the table GET PathV1Audit reads; nil: none.
	Audit      *audit.Log
	AuditStore store.Audit
	// SignIns runs the per-person sign-ins whose pages SignInPages
	// serves; nil: none.
	SignIns *oauth.Gateway
}

// Handler serves the local API.
type Handler struct {
	relay   *relay.Relay
	catalog *catalog.Catalog
	opts    Options
	log     *slog.Logger
	mux     *http.ServeMux // every route, for the socket
	v1      *http.ServeMux // the /v1 routes, for the HTTP listener (V1)
	pages   *http.ServeMux // the browser's routes (SignInPages)
	streams sync.WaitGroup // host streams' goroutines (stdio.go)
}

// New returns the local API handler.
func New(r *relay.Relay, c *catalog.Catalog, opts *Options) *Handler {
	h := &Handler{relay: r, catalog: c, mux: http.NewServeMux()}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.Logger == nil {
		h.opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h.log = h.opts.Logger
	h.v1, h.pages = http.NewServeMux(), http.NewServeMux()
	for _, rt := range h.routes() {
		pattern := rt.method + " " + rt.path
		if rt.op == 0 {
			panic("localapi: route " + pattern + " has no policy decision")
		}
		if rt.page != nil {
			h.pages.Handle(pattern, h.wrapPage(rt))
			continue
		}
		h.mux.Handle(pattern, h.wrap(rt))
		if rt.v1 {
			h.v1.Handle(pattern, h.wrap(rt))
		}
	}
	return h
}

// ServeHTTP serves the unix socket, whose peers (of this user, checked as
// they connect) are the local user: it checks what else is asking, then
// routes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(apitype.HeaderVersion, h.opts.Version)
	r = r.WithContext(principal.NewContext(r.Context(), principal.LocalUser()))
	if r.URL.Path == apitype.PathMCP {
		// Options.MCP refuses Origin and Referer itself, with an MCP error.
		if h.opts.MCP == nil {
			writeError(w, http.StatusNotFound, "MCP over HTTP is not served here")
			return
		}
		h.opts.MCP.ServeHTTP(w, r)
		return
	}
	if r.URL.Path == apitype.PathMetrics && h.opts.Metrics != nil && r.Header.Get("Origin") == "" && r.Header.Get("Referer") == "" {
		// Any Host: a scraper sends the one of the URL it was given.
		h.opts.Metrics.ServeHTTP(w, r)
		return
	}
	if r.Header.Get("Origin") != "" || r.Header.Get("Referer") != "" || r.Host != apitype.Host {
		writeError(w, http.StatusForbidden, "forbidden: the local API serves only the mcpx command")
		return
	}
	h.mux.ServeHTTP(w, r)
}

// httpError is an error with the status it answers with.
type httpError struct {
	status int
	err    error
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

// StatusCode is the status the error answers with (the live view answers
// its actions' errors with it too).
func (e *httpError) StatusCode() int { return e.status }

func statusErr(status int, err error) error { return &httpError{status, err} }

// wrap decides rt's operation when it depends on no more than who asks
// (Operate), then turns its handler's error into a JSON error response.
func (h *Handler) wrap(rt route) http.Handler {
	fn := rt.fn
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var err error
		if rt.op == principal.Operate || rt.op == principal.ReadAudit {
			err = h.policy(r).Decide(rt.op, principal.Target{})
		}
		if err != nil {
			err = refusal(err)
		} else {
			start := time.Now()
			err = fn(w, r)
			if rt.op == principal.Operate {
				h.recordAdmin(r, rt, start, err)
			}
		}
		if err == nil {
			return
		}
		status := http.StatusInternalServerError
		var he *httpError
		if errors.As(err, &he) {
			status = he.status
		}
		if status >= 500 {
			h.log.Error("local API request failed", "path", r.URL.Path, "err", err)
		}
		writeError(w, status, err.Error())
	})
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(apitype.Error{Error: msg})
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v)
}
