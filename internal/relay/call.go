package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"mcpx/internal/hostprofile"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/principal"
	"mcpx/internal/upstream"
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
	// (hold.go). A 2026-07-28 upstream's input_required reaches it as is.
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
	// exchange (exchange.go). It lives as long as the Call and is never
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
	// PromoteAt, if set, is when the caller must take the call over from
	// its host request while it goes on (make it a job, and answer the
	// host with that before the host's timer fires): Promoter.Promote is
	// called then, on a goroutine of its own, unless the call has ended.
	// It rides on the call's own timer (no timer of its own), and may be
	// called more than once, or as the call ends: Promote must be
	// idempotent and settle that race itself.
	PromoteAt time.Time
	Promoter  Promoter
	// Who is the principal the call acts for, as its face decided, and
	// Job the job it runs for (""; none), for the audit log; a call of a
	// stored job run again has no Who, and is recorded under Principal.
	Who principal.Principal
	Job string

	asTask bool // asks a 2025-11-25 server for a task (callAsTask)
}

// Promoter takes over a call that reached its Call.PromoteAt.
type Promoter interface {
	Promote()
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
// inputResponses, raw.
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
// For a 2026-07-28 host (Holdable), an upstream's -32042 becomes
// input_required, or -32021 (urlelicit.go).
func (r *Relay) CallTool(ctx context.Context, e *Entry, c Call) (json.RawMessage, error) {
	r.countCall(c.Server, 1)
	defer r.countCall(c.Server, -1)
	if r.obs == nil && r.tracer == nil && r.audit == nil && !r.log.Enabled(ctx, slog.LevelDebug) {
		return r.callToolHoldable(ctx, e, c)
	}
	o := r.begin(e, &c)
	res, err := r.callToolHoldable(ctx, e, c)
	r.end(&o, res, err)
	return res, err
}

func (r *Relay) callToolHoldable(ctx context.Context, e *Entry, c Call) (json.RawMessage, error) {
	if c.Resume == nil && r.upstreamTaskRequired(ctx, c.Server, c.Tool) {
		return r.callAsTask(ctx, e, c) // upstreamtask.go
	}
	res, err := r.callTool(ctx, e, c)
	if xres, xerr, ok := r.exchangeAndRetry(ctx, e, &c, err); ok {
		res, err = xres, xerr
	}
	if sres, serr, ok := r.signInElicitation(&c, err); ok {
		return sres, serr
	}
	if !c.Holdable {
		return res, err
	}
	els, ok, bad := urlElicitations(err)
	switch {
	case !ok:
		return res, err
	case bad != nil:
		// Never a -32042 to a 2026-07-28 host: it "MUST NOT" see one.
		return nil, fmt.Errorf("upstream %q refused the call with a URL elicitation mcpx cannot relay: %w", c.Server, bad)
	}
	return r.urlInputRequired(&c, els)
}

func (r *Relay) callTool(ctx context.Context, e *Entry, call Call) (json.RawMessage, error) {
	if call.Resume != nil && strings.HasPrefix(call.Resume.State, statePrefix) {
		return r.resume(ctx, e, call)
	}
	sess, err := r.pool.SessionAs(ctx, call.Server, call.SessionKey, call.Person)
	if err != nil {
		return nil, err
	}
	if call.Resume != nil {
		// Every state a host is given is sealed (upstate.go): this one
		// was not.
		return nil, stateError(errStateForged)
	}
	idle, max := r.Timeouts(call.Server, call.IdleTimeout, call.MaxTimeout)
	cancel := call.Cancel
	if cancel == nil {
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
	}
	// The call's state holds the call, its timer, its questions and its
	// call slot: one allocation, where four would be (BenchmarkCallTool,
	// allocs/op, in internal/relay).
	st := &callState{c: call, entry: e, idle: idle, obs: r.obs}
	c := &st.c
	st.call = c
	// The host's timer runs from its request: heartbeats start now,
	// before the call may wait for a slot.
	st.startHeartbeat(c.HostSince, hostToolName(c))
	defer st.stopHeartbeat()
	timer := &st.ct
	// The hard maximum starts here, the idle timer below; the runtime
	// timer is set before anything in between waits, or else once, for
	// both, by startIdle.
	timer.note(max, cancel)
	timer.promoteAt, timer.promoter = c.PromoteAt, c.Promoter
	defer timer.stop()
	g, err := r.lim.take(ctx, c.Server, timer.armHard)
	if err != nil {
		return nil, err
	}
	st.slot = slot{l: r.lim, server: c.Server, g: g}
	held := false // a held call keeps its slot, and its questions
	defer func() {
		if !held {
			st.slot.release()
		}
	}()
	if old := sess; old.Err() != nil {
		// The session ended while the call waited: its successor, if the
		// server is still configured.
		timer.armHard() // dialling it may take a while
		sess, err = r.pool.SessionAs(ctx, c.Server, c.SessionKey, c.Person)
		if errors.Is(err, upstream.ErrUnknownServer) {
			err = old.Err() // a reload removed it, and says so
		}
		if err != nil {
			return nil, err
		}
	}
	st.timer = timer
	timer.startIdle(idle)

	if c.Params == nil {
		c.Params = &jsonrpc.Object{}
	}
	c.Params.Set("name", jsonrpc.Quote(c.Tool))
	if c.Params.Has("_meta") {
		mcp.EditMeta(c.Params, func(meta *jsonrpc.Object) { meta.Delete(mcp.MetaProgressToken) })
	}
	// The call's questions to its host end when it does, after the
	// upstream has been told of a cancellation: so the host hears of the
	// call's end, and the upstream of the question's, in that order.
	a := &st.asks
	a.init(c.Asker, c.Server, c.Host, r.log, st)
	a.end = cancel
	q := &st.q
	q.parent = ctx
	defer func() {
		if held {
			return
		}
		why := context.Cause(ctx)
		if why == nil {
			why = errCallEnded
		}
		q.endWith(why)
		a.close()
	}()
	// A 2026-07-28 upstream that needs input answers input_required; for
	// a legacy host (c.Asker set) mcpx asks the host and retries, a new
	// request each round, with the host's answers and the upstream's
	// requestState byte for byte. A 2026-07-28 host (no Asker) gets the
	// result as it is, and retries itself.
	//
	// The retry base is the params before the first round stamped their
	// _meta (Start does). Params without a _meta gain only that member,
	// so theirs is made when a retry needs it, without it: most calls
	// never retry. Others are encoded now.
	orig := c.Params
	var base json.RawMessage
	if c.Asker != nil && !c.Holdable && orig.Has("_meta") {
		base = orig.Bytes()
	}
	for round := 1; ; round++ {
		res, req, err := r.round(ctx, q, sess, c, st, a, e)
		if task, ok := createdTask(res, c.asTask); ok && err == nil {
			res, req, err = r.followTask(ctx, q, sess, c, st, a, e, task) // upstreamtask.go
		}
		if errors.Is(err, errHold) {
			held = true
			args, _ := c.Params.Get("arguments")
			return r.hold(&heldCall{sess: sess, req: req, asks: a, st: st, release: st.slot.release, server: c.Server, tool: c.Tool,
				principal: c.Principal, digest: requestDigest(c.Server, c.Tool, args), pending: map[string]*upstream.Inbound{}})
		}
		if err != nil || c.Asker == nil || c.Holdable {
			if err == nil && c.Holdable {
				res = r.sealUpstreamState(c, res)
			}
			return res, err
		}
		ir, ok := inputRequired(res)
		if !ok {
			return res, nil
		}
		if round > maxInputRounds {
			return toolError(fmt.Sprintf("upstream %q still asked for input after %d rounds; mcpx gave up", c.Server, maxInputRounds)), nil
		}
		answers, failed, pass, err := answerRound(ctx, c.Asker, a, ir)
		if pass {
			return res, nil
		}
		if err != nil || failed != nil {
			return failed, err
		}
		if base == nil {
			p := orig.Clone()
			p.Delete("_meta") // what the first round added
			base = p.Bytes()
		}
		c.Params = retryParams(base, answers, ir.state)
	}
}

// questionCtx is the context of a call's questions to its host, bound to
// the call's context but not ended by it: ended with the call's cause
// only after the upstream has been told. It is made when the first
// question is asked (most calls ask none), and used on the call's own
// goroutine only.
type questionCtx struct {
	parent context.Context
	ctx    context.Context
	end    context.CancelCauseFunc
}

// get returns the context, made on the first call.
func (q *questionCtx) get() context.Context {
	if q.ctx == nil {
		q.ctx, q.end = context.WithCancelCause(context.WithoutCancel(q.parent))
	}
	return q.ctx
}

// endWith ends the context with why, if it was made.
func (q *questionCtx) endWith(why error) {
	if q.end != nil {
		q.end(why)
	}
}

// round sends the call upstream once and waits for its answer; if ctx
// ends first, it cancels the upstream request and returns ctx's cause.
func (r *Relay) round(ctx context.Context, q *questionCtx, sess *upstream.Session, c *Call, st *callState, a *asks, e *Entry) (json.RawMessage, *upstream.Request, error) {
	req, err := sess.Start(mcp.MethodToolsCall, c.Params, c.ClientCaps, upstream.StartOptions{OnProgressObject: st.onProgressObject, OnMessage: c.OnMessage, LogLevel: c.LogLevel, Inbound: a})
	if err != nil {
		return nil, nil, err
	}
	if e != nil {
		e.attach(c.Server, c.Tool, req.ID)
	}
	if r.log.Enabled(ctx, slog.LevelDebug) {
		r.log.Debug("call sent upstream", "callId", callID(e), "server", c.Server, "tool", c.Tool, "upstreamId", req.ID)
	}
	res, err := r.await(ctx, q, sess, c, req, a, e)
	return res, req, err
}

// await waits for req's answer. An upstream request for the host is
// started (asked of a legacy host), or, for a Holdable call, ends the
// wait with errHold and req still running. If ctx ends first, req is
// cancelled upstream and ctx's cause returned.
func (r *Relay) await(ctx context.Context, q *questionCtx, sess *upstream.Session, c *Call, req *upstream.Request, a *asks, e *Entry) (json.RawMessage, error) {
wait:
	for {
		select {
		case <-req.Done():
			return req.Result()
		case <-a.ready:
			if a.woken(c.Holdable, q) {
				return nil, errHold
			}
		case <-ctx.Done():
			break wait
		}
	}
	cause := context.Cause(ctx)
	select {
	case <-req.Done(): // the result won the race: deliver it
		return req.Result()
	default:
	}
	if sess.Cancel(req, Reason(cause)) {
		r.log.Info("cancelled upstream call", "callId", callID(e), "server", c.Server, "tool", c.Tool, "upstreamId", req.ID, "reason", Reason(cause))
	}
	return nil, cause
}
