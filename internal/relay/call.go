package relay

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"mcpx/internal/hostprofile"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/principal"
)

// Call is one tools/call to relay.
type Call struct {
	Server string
	Tool   string // the upstream's own name
	// Params is the params object to send. Call sets its name and its
	// progress token; every other byte goes upstream as it is.
	Params *jsonrpc.Object
	// ClientCaps are the capabilities of the host request, for modern
	// upstreams; nil means none.
	ClientCaps json.RawMessage
	// HostToken is the host's progress token, raw; nil if it asked for none.
	HostToken json.RawMessage
	// Progress receives each progress notification's params, with the host's
	// token restored, in wire order, never after Call returns. It must not
	// block. Called only when HostToken is set.
	Progress func(params json.RawMessage)
	// OnMessage receives the log messages on the call's own upstream
	// stream (see upstream.StartOptions); nil leaves them to the pool.
	OnMessage func(*jsonrpc.Message)
	// LogLevel is a legacy host's level, for modern upstreams (see
	// upstream.StartOptions).
	LogLevel string
	// IdleTimeout and MaxTimeout are what the host asked for; zero means
	// none. They can only shorten the configured ones.
	IdleTimeout time.Duration
	MaxTimeout  time.Duration
	// Asker is the host to relay the upstream's requests to during the
	// call (elicitation, sampling, roots); nil refuses them.
	Asker Asker
	// Holdable marks a 2026-07-28 host: it is never sent requests. What a
	// legacy upstream asks (what Asker.Can allows) ends the host's request
	// with input_required, and the upstream call is held for its retry
	// (package bridge). A 2026-07-28 upstream's input_required reaches it
	// as is.
	Holdable bool
	// Principal names the host for the requestState mcpx seals.
	Principal string
	// Host names the host session behind the call (a stdio connection, a
	// legacy HTTP session, one stateless request): an upstream request
	// that names no call goes to a call only if no other host's call could
	// take it (upstream.InboundHandler's Owner).
	Host string
	// SessionKey names the host's own upstream sessions: a perHost
	// server's calls of one key go to that key's session (see
	// upstream.Pool.SessionFor); "" uses the shared session. (Not a
	// HostKey, which names one host request in the registry.)
	SessionKey string
	// Person is the ID of the principal the call acts for upstream: a
	// per-person server's call goes on that principal's own session, with
	// their own sign-in (upstream.Pool.SessionAs).
	Person string
	// Subject is the access token the person behind the call sent to mcpx
	// (only a person's; "" otherwise), for a per-person server's token
	// exchange (package bridge). It lives as long as the Call and is never
	// logged, kept or sent anywhere but the configured token endpoint.
	Subject string
	// Resume is set when the host retries with a requestState.
	Resume *Resume
	// HostProfile is the tool-call timer of the host behind the call
	// (Relay.HostProfile); its zero value is no timer. A host whose
	// timer progress resets, and that gave a HostToken, is sent
	// heartbeats while the upstream is silent (heartbeat.go).
	HostProfile hostprofile.Profile
	// HostSince is when the host sent the request, from when its timer
	// runs; zero means when CallTool is called.
	HostSince time.Time
	// Cancel, if set, cancels the ctx given to CallTool, which is this
	// call's alone (a host request's): the call's timers end it with
	// their cause, instead of a context of the call's own (one less per
	// call), and the caller cancels it once CallTool has returned.
	Cancel context.CancelCauseFunc
	// Deadline, if set, is a moment its caller must hear of while the
	// call goes on (its host's timer less a margin, say): OnDeadline's
	// DeadlineReached is called then, on a goroutine of its own, unless
	// the call has ended. The relay does nothing else at it: the call goes
	// on, its timeouts unchanged. It rides on the call's own timer (no
	// timer of its own), and may be called more than once, or as the call
	// ends: DeadlineReached must be idempotent and settle that race itself.
	Deadline   time.Time
	OnDeadline DeadlineHook
	// Who is the principal the call acts for, as its face decided, and
	// Job the job it runs for (""; none), for the audit log; a call of a
	// stored job run again has no Who, and is recorded under Principal.
	Who principal.Principal
	Job string
}

// DeadlineHook is told that a call reached its Call.Deadline.
type DeadlineHook interface {
	DeadlineReached()
}

// HostDeadline returns when the host's timer for c fires unless the call
// has ended: HostSince (or now, if zero) plus its profile's timeout. It is
// zero when that timer never fires: the host has none, or progress resets
// it and the host gave a token, so that mcpx's heartbeats keep it from
// firing while the call lasts. A caller that must answer the host in
// time (a job) answers before it.
func (c *Call) HostDeadline() time.Time {
	p := c.HostProfile
	if p.Timeout <= 0 || wantsHeartbeats(c) {
		return time.Time{}
	}
	since := c.HostSince
	if since.IsZero() {
		since = time.Now()
	}
	return since.Add(p.Timeout)
}

// Resume is a 2026-07-28 host's retry: its requestState and
// inputResponses, raw. The relay carries it to its Bridge, which alone
// reads it.
type Resume struct {
	State     string
	Responses json.RawMessage
}

// Timeouts returns the effective idle and hard timeouts of a call to server
// when the caller asked for idle and max (zero: no wish). Zero means off.
func (r *Relay) Timeouts(server string, idle, max time.Duration) (time.Duration, time.Duration) {
	var cfgIdle, cfgMax time.Duration
	if srv := r.cfg.Load().Servers[server]; srv != nil {
		cfgIdle, cfgMax = srv.IdleTimeout, srv.MaxTimeout
	}
	return shorter(cfgIdle, idle), shorter(cfgMax, max)
}

// shorter returns the shorter of two timeouts where zero means none.
func shorter(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}

// CallTool relays c and returns the upstream's raw result, or an error: a
// *jsonrpc.Error from the upstream, an *upstream.ExitError, a *BusyError
// when the upstream's call limit and queue left no room, or the *Cause
// that ended the call (ctx's own cause when the caller gave up).
//
// The upstream's start is not timed here (it has its own timeout). Then
// the hard maximum starts, and the call takes one of the upstream's call
// slots, waiting in its queue if they are all taken: the hard maximum
// counts that wait (it bounds the call as the host sees it), the idle
// timer does not (it starts once the call goes upstream). A call that
// leaves the queue, for whatever reason, has sent nothing upstream.
//
// With a Bridge set, the call is the bridge's to run (across revisions,
// through Begin, Round and End); without one it goes upstream once.
func (r *Relay) CallTool(ctx context.Context, e *Entry, c Call) (json.RawMessage, error) {
	r.countCall(c.Server, 1)
	defer r.countCall(c.Server, -1)
	if r.obs == nil && r.tracer == nil && r.audit == nil && !r.log.Enabled(ctx, slog.LevelDebug) {
		return r.callTool(ctx, e, c)
	}
	o := r.begin(e, &c)
	res, err := r.callTool(ctx, e, c)
	r.end(&o, res, err)
	return res, err
}

// Bridge carries tool calls across protocol revisions around the plain
// call (package bridge): CallTool hands it every call, after the call is
// counted and observed, and it runs the call's life through Begin, the
// Live's rounds and End, adding what the host and the upstream need of
// each other. It must run each call it is given, and return its outcome
// as CallTool does.
type Bridge interface {
	CallTool(ctx context.Context, e *Entry, c Call) (json.RawMessage, error)
}

// SetBridge makes b the relay's bridge. Call it before the relay serves
// (the daemon wires it), once; without one, a tool call goes upstream
// once, as it is.
func (r *Relay) SetBridge(b Bridge) { r.bridge = b }

// callTool hands c to the bridge, or relays it plainly: one round.
func (r *Relay) callTool(ctx context.Context, e *Entry, c Call) (json.RawMessage, error) {
	if r.bridge != nil {
		return r.bridge.CallTool(ctx, e, c)
	}
	l, err := r.Begin(ctx, e, c)
	if err != nil {
		return nil, err
	}
	defer l.End()
	res, _, err := l.Round()
	return res, err
}
