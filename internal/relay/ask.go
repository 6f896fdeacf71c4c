package relay

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/upstream"
)

// Asker is the host behind one call, to which mcpx relays the requests
// the upstream sends during it (elicitation, sampling, roots).
type Asker interface {
	// Can reports whether the host declared what method with params
	// needs: the capability, and for elicitation the mode.
	Can(method string, params json.RawMessage) bool
	// Ask sends the host the request under an id of mcpx's and waits for
	// its answer: the raw result, or a *jsonrpc.Error from the host. If
	// ctx ends first, the host is told (notifications/cancelled for
	// mcpx's id, with ctx's cause as the reason) and the cause returned.
	Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Notify sends the host a notification that belongs to the call.
	Notify(method string, params json.RawMessage)
}

// InputRequest is one request of an upstream's input_required result.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// InputAsker is an Asker that takes an input_required round's requests
// all at once, rather than one by one (a task's, whose host answers
// them when it polls). pass reports that the call is to answer the
// input_required as it is, for its host to retry.
type InputAsker interface {
	Asker
	AskInput(ctx context.Context, keys []string, reqs map[string]InputRequest) (answers map[string]json.RawMessage, pass bool, err error)
}

// Refuser is an Asker that can say why it cannot take a request its Can
// refuses: the upstream is answered with that error (nil: the host did
// not declare the capability).
type Refuser interface {
	Refusal(method string, params json.RawMessage) *jsonrpc.Error
}

// UpstreamCancelledError is the cause of a host question the upstream
// withdrew: the host is told why, the upstream gets no answer.
type UpstreamCancelledError struct{ Reason string }

func (e *UpstreamCancelledError) Error() string { return e.Reason }

// asks relays one call's upstream requests to its host. It implements
// upstream.InboundHandler: requests are queued on the upstream's reader
// goroutine and started by the call's own goroutine (start), each in a
// goroutine that close waits for. While any question waits for the host,
// the call's idle timer is paused: the upstream is waiting on a person,
// not hung. The hard maximum still counts.
type asks struct {
	asker  Asker
	log    *slog.Logger
	server string
	owner  string // the call's host session
	pause  pauser // stops or restarts the idle timer; nil: none
	// end ends the call with its cause (a question past a bound,
	// asklimit.go); nil: nothing to end.
	end func(error)

	ready chan struct{} // signalled when queued is not empty

	mu       sync.Mutex
	queued   []*upstream.Inbound
	closed   bool
	waiting  int
	asked    int                 // questions the upstream sent during the call
	open     []*upstream.Inbound // those not answered yet, as of the last look
	over     bool                // a bound was passed: the call is ending
	removers []func()
	wg       sync.WaitGroup
}

// pauser is what pauses a call's idle timer: its *callState.
type pauser interface{ pauseIdle(paused bool) }

// init sets up a zero asks (a callState's, so that a call's state takes
// one allocation).
func (a *asks) init(asker Asker, server, owner string, log *slog.Logger, pause pauser) {
	a.asker, a.server, a.owner, a.log, a.pause, a.ready = asker, server, owner, log, pause, make(chan struct{}, 1)
}

// Owner implements upstream.InboundHandler.
func (a *asks) Owner() string { return a.owner }

// Accepts implements upstream.InboundHandler.
func (a *asks) Accepts(method string, params json.RawMessage) bool {
	return a.asker != nil && a.asker.Can(method, params)
}

// Refusal implements upstream.Refuser: the asker's, if it says why.
func (a *asks) Refusal(method string, params json.RawMessage) *jsonrpc.Error {
	if r, ok := a.asker.(Refuser); ok {
		return r.Refusal(method, params)
	}
	return nil
}

// woken handles a ready signal for a call waiting on its upstream: it
// reports true if the call is to be held for its host's input (holdable:
// a 2026-07-28 host), else starts asking the host the queued questions.
// A signal with nothing queued is stale: a hold took its question along
// with an earlier one (Handle queues, then signals), and holding again
// would ask the host nothing (an input_required without inputRequests,
// seen with server-everything's two roots/list requests in a row).
func (a *asks) woken(holdable bool, q *questionCtx) bool {
	a.mu.Lock()
	queued := len(a.queued) > 0
	a.mu.Unlock()
	if !queued {
		return false
	}
	if holdable {
		return true
	}
	a.start(q.get())
	return false
}

// Handle implements upstream.InboundHandler.
func (a *asks) Handle(in *upstream.Inbound) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		in.Fail(jsonrpc.Errorf(jsonrpc.CodeInternalError, "the tool call this %s belongs to has ended", in.Method))
		return
	}
	if over := a.admitLocked(in); over != nil {
		first := !a.over
		a.over = true
		a.mu.Unlock()
		in.Fail(jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s", over.Error()))
		if first {
			a.log.Warn("ending a tool call: its upstream asked too many questions", "server", a.server, "limit", over.Limit, "inTotal", over.InTotal)
			if a.end != nil {
				a.end(over)
			}
		}
		return
	}
	a.queued = append(a.queued, in)
	a.mu.Unlock()
	select {
	case a.ready <- struct{}{}:
	default:
	}
}

// start runs the queued requests, each in a goroutine bound to ctx (the
// call's).
func (a *asks) start(ctx context.Context) {
	a.mu.Lock()
	queued := a.queued
	a.queued = nil
	if a.closed {
		queued = nil
	}
	a.wg.Add(len(queued))
	a.mu.Unlock()
	for _, in := range queued {
		go a.run(ctx, in)
	}
}

// close ends the call's questions once the call's context has ended (its
// cause is the reason): each still waiting for its host has been withdrawn
// there (notifications/cancelled) and answered upstream with an error.
// It returns once all have ended.
func (a *asks) close() {
	a.mu.Lock()
	a.closed = true
	queued := a.queued
	a.queued = nil
	removers := a.removers
	a.removers = nil
	a.mu.Unlock()
	for _, in := range queued {
		in.Fail(jsonrpc.Errorf(jsonrpc.CodeInternalError, "the tool call this %s belongs to has ended", in.Method))
	}
	a.wg.Wait()
	for _, rm := range removers {
		rm()
	}
}

// run relays one upstream request to the host and its answer back.
func (a *asks) run(ctx context.Context, in *upstream.Inbound) {
	defer a.wg.Done()
	a.busy(1)
	defer a.busy(-1)
	qctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	in.OnCancel(func(reason string) { cancel(&UpstreamCancelledError{Reason: reason}) })
	if in.Method == mcp.MethodElicitationCreate {
		a.routeCompletion(in)
	}
	a.log.Info("relaying an upstream request to the host", "server", a.server, "method", in.Method, "upstreamId", in.ID.String())
	res, err := a.asker.Ask(qctx, in.Method, in.Params)
	var rpcErr *jsonrpc.Error
	var upCancel *UpstreamCancelledError
	switch {
	case err == nil:
		in.Reply(res)
	case errors.As(err, &rpcErr):
		in.Fail(rpcErr)
	case errors.As(context.Cause(qctx), &upCancel):
		// Withdrawn by the upstream: it wants no answer.
	case ctx.Err() != nil:
		in.Fail(jsonrpc.Errorf(jsonrpc.CodeInternalError, "the tool call this %s belongs to has ended: %s", in.Method, Reason(context.Cause(ctx))))
	default:
		in.Fail(jsonrpc.Errorf(jsonrpc.CodeInternalError, "relaying %s to the host: %v", in.Method, err))
	}
}

// routeCompletion sends the completion of a URL-mode elicitation to this
// call's host, for as long as the call lasts.
func (a *asks) routeCompletion(in *upstream.Inbound) {
	id := mcp.URLElicitationID(in.Method, in.Params)
	if id == "" {
		return
	}
	rm := in.RouteCompletion(id, func(params json.RawMessage) {
		a.asker.Notify(mcp.MethodElicitationComplete, params)
	})
	a.mu.Lock()
	a.removers = append(a.removers, rm)
	a.mu.Unlock()
}

func (a *asks) busy(delta int) {
	a.mu.Lock()
	a.waiting += delta
	n := a.waiting
	a.mu.Unlock()
	if a.pause != nil && (delta > 0 && n == 1 || delta < 0 && n == 0) {
		a.pause.pauseIdle(n > 0)
	}
}

// ErrCallEnded is the cause of the questions of a call that ended with
// its result: withdrawn from the host with this reason.
var ErrCallEnded = errors.New("the tool call it belongs to has ended")
