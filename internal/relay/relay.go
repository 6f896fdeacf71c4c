package relay

import (
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"mcpx/internal/audit"
	"mcpx/internal/config"
	"mcpx/internal/hostprofile"
	"mcpx/internal/upstream"
)

// Relay runs tool calls against the upstream pool.
type Relay struct {
	pool   *upstream.Pool
	cfg    atomic.Pointer[config.Config]
	reg    *Registry
	lim    *limiter
	log    *slog.Logger
	obs    Observer   // nil: nobody listens (observe.go)
	tracer Tracer     // nil: no traces (trace.go)
	audit  *audit.Log // nil: no audit log (audit.go)
	bridge Bridge     // nil: plain calls (call.go)

	hosts atomic.Pointer[map[string]hostprofile.Override] // the config's, for HostProfile

	callsMu sync.Mutex
	calls   map[string]int // tool calls under way (CallTool), by server
}

// New returns a relay over pool. A nil logger discards.
func New(cfg *config.Config, pool *upstream.Pool, reg *Registry, log *slog.Logger) *Relay {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &Relay{pool: pool, reg: reg, log: log}
	r.cfg.Store(cfg)
	r.hosts.Store(hostOverrides(cfg))
	r.lim = newLimiter(r.callLimits)
	return r
}

// SetConfig makes cfg the config of calls that start from now on (a
// reload); calls under way keep their timers. New call limits apply to
// calls that arrive, and slots that come free, from now on: a raised
// limit admits queued calls at once.
func (r *Relay) SetConfig(cfg *config.Config) {
	r.cfg.Store(cfg)
	r.hosts.Store(hostOverrides(cfg))
	r.lim.kick()
}

// callLimits returns server's call limits; none for a server the config
// does not have (a call to it fails in the pool).
func (r *Relay) callLimits(server string) config.CallLimits {
	if cfg := r.cfg.Load(); cfg != nil {
		if srv := cfg.Servers[server]; srv != nil {
			return srv.CallLimits
		}
	}
	return config.CallLimits{}
}

// MaxCallsPerHost returns how many requests one host connection may have
// in flight at once, per the current config; 0 means no limit.
func (r *Relay) MaxCallsPerHost() int {
	if cfg := r.cfg.Load(); cfg != nil {
		return cfg.MaxCallsPerHost
	}
	return 0
}

// Config returns the current config (nil before one is set).
func (r *Relay) Config() *config.Config { return r.cfg.Load() }

// CodeMode reports whether the current config hides the servers' own
// tools from hosts, leaving the meta-tools.
func (r *Relay) CodeMode() bool {
	cfg := r.cfg.Load()
	return cfg != nil && cfg.CodeMode
}

// Queued returns how many calls wait for a slot of their upstream, by
// server; servers with none are left out.
func (r *Relay) Queued() map[string]int { return r.lim.queued() }

// InFlight returns how many tool calls are under way, by server: every
// CallTool, a host's, the CLI's or a job's, queued for a slot or not (the
// calls the Observer's CallStarted counts). Servers with none are left out.
func (r *Relay) InFlight() map[string]int {
	r.callsMu.Lock()
	defer r.callsMu.Unlock()
	out := make(map[string]int, len(r.calls))
	for s, n := range r.calls {
		out[s] = n
	}
	return out
}

// countCall adds d to server's tool calls under way.
func (r *Relay) countCall(server string, d int) {
	r.callsMu.Lock()
	defer r.callsMu.Unlock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	if r.calls[server] += d; r.calls[server] <= 0 {
		delete(r.calls, server)
	}
}

// Registry returns the registry of in-flight requests.
func (r *Relay) Registry() *Registry { return r.reg }

// Pool returns the upstream pool.
func (r *Relay) Pool() *upstream.Pool { return r.pool }
