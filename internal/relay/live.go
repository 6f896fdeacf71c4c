package relay

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/upstream"
)

// Live is one tool call under way: its upstream session, its call slot,
// its timers, its heartbeats and its questions to its host, from Begin to
// End. Its methods are called on the call's own goroutine (a held call's
// is then its retry's), but for Progress and Alive, which may run
// anywhere.
type Live struct {
	r    *Relay
	ctx  context.Context // the call's: its timers and its host end it
	own  context.CancelCauseFunc
	e    *Entry
	sess *upstream.Session
	st   *callState
	held bool // End leaves the slot and the questions to Release
}

// ErrHold ends the wait of a Holdable call whose upstream asked its host
// something (Round, Await): the upstream request goes on, and its
// questions wait, queued, for the caller to Hold the call and take them.
var ErrHold = errors.New("held for the host's input")

// Begin starts c's life: the upstream session (c.Person's, c.SessionKey's
// or the shared one), the hard maximum, a call slot (waiting in the
// upstream's queue if need be), the idle timer, the host's heartbeats,
// and the params as they go upstream (the tool's own name, no progress
// token of the host's). Nothing has been sent upstream yet. On an error
// nothing is left to end; else the caller ends the call with End, once.
func (r *Relay) Begin(ctx context.Context, e *Entry, call Call) (*Live, error) {
	sess, err := r.pool.SessionAs(ctx, call.Server, call.SessionKey, call.Person)
	if err != nil {
		return nil, err
	}
	idle, max := r.Timeouts(call.Server, call.IdleTimeout, call.MaxTimeout)
	cancel := call.Cancel
	var own context.CancelCauseFunc
	if cancel == nil {
		ctx, cancel = context.WithCancelCause(ctx)
		own = cancel
	}
	// The call's state holds the call, its timer, its questions and its
	// call slot: one allocation, where four would be (BenchmarkCallTool,
	// allocs/op, in internal/relay).
	st := &callState{c: call, entry: e, idle: idle, obs: r.obs}
	c := &st.c
	st.call = c
	l := &st.live
	l.r, l.ctx, l.own, l.e, l.st = r, ctx, own, e, st
	// The host's timer runs from its request: heartbeats start now,
	// before the call may wait for a slot.
	st.startHeartbeat(c.HostSince, hostToolName(c))
	timer := &st.ct
	// The hard maximum starts here, the idle timer below; the runtime
	// timer is set before anything in between waits, or else once, for
	// both, by startIdle.
	timer.note(max, cancel)
	timer.deadline, timer.hook = c.Deadline, c.OnDeadline
	g, err := r.lim.take(ctx, c.Server, timer.armHard)
	if err != nil {
		l.End()
		return nil, err
	}
	st.slot = slot{l: r.lim, server: c.Server, g: g}
	if old := sess; old.Err() != nil {
		// The session ended while the call waited: its successor, if the
		// server is still configured.
		timer.armHard() // dialling it may take a while
		sess, err = r.pool.SessionAs(ctx, c.Server, c.SessionKey, c.Person)
		if errors.Is(err, upstream.ErrUnknownServer) {
			err = old.Err() // a reload removed it, and says so
		}
		if err != nil {
			l.End()
			return nil, err
		}
	}
	l.sess = sess
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
	// upstream has been told of a cancellation (End): so the host hears
	// of the call's end, and the upstream of the question's, in that
	// order.
	a := &st.asks
	a.init(c.Asker, c.Server, c.Host, r.log, st)
	a.end = cancel
	st.q.parent = ctx
	return l, nil
}

// End ends the call's life: its questions still waiting are withdrawn
// from the host with the call's cause, its slot given back (unless Hold
// kept both), its timers and heartbeats stopped.
func (l *Live) End() {
	st := l.st
	if !l.held {
		if st.asks.ready != nil {
			why := context.Cause(l.ctx)
			if why == nil {
				why = ErrCallEnded
			}
			st.q.endWith(why)
			st.asks.close()
		}
		if st.slot.l != nil {
			st.slot.release()
		}
	}
	st.ct.stop()
	st.stopHeartbeat()
	if l.own != nil {
		l.own(nil)
	}
}

// Call is the call as it goes upstream: the bridge may set its Params
// between rounds.
func (l *Live) Call() *Call { return &l.st.c }

// Context is the call's context, which its timers and its host end.
func (l *Live) Context() context.Context { return l.ctx }

// Session is the upstream session the call goes on.
func (l *Live) Session() *upstream.Session { return l.sess }

// Inbound is what the upstream asks during the call goes to: the call's
// host, for a request started with it (upstream.StartOptions.Inbound).
func (l *Live) Inbound() upstream.InboundHandler { return &l.st.asks }

// Round sends the call upstream once, with its Params as they are now,
// and waits for its answer: the upstream's result or error, or ctx's
// cause once the request is cancelled upstream, or ErrHold (with the
// request still running) for a Holdable call whose upstream asked
// something.
func (l *Live) Round() (json.RawMessage, *upstream.Request, error) {
	return l.r.round(l.ctx, &l.st.q, l.sess, &l.st.c, l.st, &l.st.asks, l.e)
}

// Await waits for req, a request of the call's on its session, as Round
// waits for its own.
func (l *Live) Await(req *upstream.Request) (json.RawMessage, error) {
	return l.r.await(l.ctx, &l.st.q, l.sess, &l.st.c, req, &l.st.asks, l.e)
}

// Progress passes a progress notification's params on as the upstream's
// progress of the call (onProgressObject).
func (l *Live) Progress(obj *jsonrpc.Object) { l.st.onProgressObject(obj) }

// Alive notes that the upstream answered with no news: the idle timer
// restarts, unless a question to the host has paused it.
func (l *Live) Alive() {
	st := l.st
	st.mu.Lock()
	if st.timer != nil && !st.paused {
		st.timer.touch()
	}
	st.mu.Unlock()
}

// WaitOnHost notes that one more (delta 1) or one fewer (-1) question of
// the call waits for its host: the idle timer is paused while any does.
func (l *Live) WaitOnHost(delta int) { l.st.asks.busy(delta) }

// Hold keeps the call past End, for its host's retry: the upstream
// request goes on with its call slot and its questions until the caller
// ends it with Release. It is called on the call's own goroutine, before
// End.
func (l *Live) Hold() { l.held = true }

// Queued takes the questions the upstream has asked since the last look
// from the queue (a held call's, for its host's input_required).
func (l *Live) Queued() []*upstream.Inbound {
	a := &l.st.asks
	a.mu.Lock()
	queued := a.queued
	a.queued = nil
	a.mu.Unlock()
	return queued
}

// Resume waits for req, the held call's request, again: for its host's
// retry c (e its entry), under timers of the retry's own.
func (l *Live) Resume(ctx context.Context, e *Entry, c Call, req *upstream.Request) (json.RawMessage, error) {
	r := l.r
	idle, max := r.Timeouts(c.Server, c.IdleTimeout, c.MaxTimeout)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := &callTimer{deadline: c.Deadline, hook: c.OnDeadline}
	timer.init(max, cancel)
	defer timer.stop()
	timer.startIdle(idle)
	cs := l.st
	cs.mu.Lock()
	cs.call, cs.entry, cs.idle, cs.timer = &c, e, idle, timer
	cs.mu.Unlock()
	if e != nil {
		e.attach(c.Server, c.Tool, req.ID)
	}
	return r.await(ctx, &questionCtx{ctx: ctx}, l.sess, &c, req, &cs.asks, e)
}

// Release ends a held call: its questions, answered or failed by then,
// and its call slot.
func (l *Live) Release() {
	l.st.asks.close()
	l.st.slot.release()
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
// wait with ErrHold and req still running. If ctx ends first, req is
// cancelled upstream and ctx's cause returned.
func (r *Relay) await(ctx context.Context, q *questionCtx, sess *upstream.Session, c *Call, req *upstream.Request, a *asks, e *Entry) (json.RawMessage, error) {
wait:
	for {
		select {
		case <-req.Done():
			return req.Result()
		case <-a.ready:
			if a.woken(c.Holdable, q) {
				return nil, ErrHold
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
