package hostserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// readLoop reads the host's messages until the stream ends. Quick requests
// are answered inline, in order; requests that may wait are registered
// here, before any later message is read, and run in their own goroutine.
func (hs *hostSession) readLoop(r *jsonrpc.Reader, witness Witness) error {
	for {
		line, err := r.ReadLine()
		if err != nil {
			var over *jsonrpc.OversizeError
			if errors.As(err, &over) {
				fail(hs.out, over.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: %v", over))
				continue
			}
			return err
		}
		msg, err := jsonrpc.Decode(line)
		switch {
		case errors.Is(err, jsonrpc.ErrBatch):
			fail(hs.out, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported"))
			continue
		case err != nil && msg.Method != "" && !msg.ID.IsValid():
			// A malformed notification: never answered.
			hs.srv.log.Debug("dropped a malformed notification", "host", hs.id, "method", msg.Method, "err", err)
			continue
		case err != nil:
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) {
				rpcErr = jsonrpc.Errorf(jsonrpc.CodeParseError, "parse error: %v", err)
			}
			fail(hs.out, msg.ID, rpcErr)
			continue
		}
		if witness != nil {
			witness.Saw(msg, line)
		}
		switch {
		case msg.IsRequest():
			hs.routeRequest(msg, hs.out)
		case msg.IsNotification():
			hs.notification(msg)
		default:
			hs.answer(msg) // to a request mcpx relayed from an upstream
		}
	}
}

// routeRequest routes one host request: answered here, in order, or
// admitted to run on a handler goroutine. Its messages go to out, and
// out.finish is called after the last of them: here, or when it has been
// executed.
//
// One request's life, by name: read (readLoop), routeRequest, admit
// (registered in the relay registry and counted against the host's
// limit), dispatch (handed to a handler goroutine: the session's own, or
// an HTTP face's shared worker), execute (its handler runs; then it is
// unregistered and its sink finished).
func (hs *hostSession) routeRequest(msg *jsonrpc.Message, out sink) {
	admitted := false
	defer func() {
		if !admitted {
			out.finish()
		}
	}()
	switch msg.Method {
	case mcp.MethodInitialize:
		hs.initialize(msg, out)
		return
	case mcp.MethodPing:
		reply(out, msg.ID, json.RawMessage("{}"))
		return
	case mcp.MethodDiscover:
		hs.discover(msg, out)
		return
	}
	req, rpcErr := hs.classify(msg, out)
	if rpcErr != nil {
		fail(out, msg.ID, rpcErr)
		return
	}
	switch msg.Method {
	case mcp.MethodToolsList, mcp.MethodToolsCall:
		handle := (*hostSession).toolsCall
		if msg.Method == mcp.MethodToolsList {
			handle = (*hostSession).toolsList
		}
		admitted = hs.admit(req, handle)
	case mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksList, mcp.MethodTasksCancel, mcp.MethodTasksUpdate:
		if h := modernTaskHandler(msg.Method); req.modern && h != nil && hs.srv.opts.Jobs != nil {
			admitted = hs.admit(req, h)
			break
		}
		if req.modern || !hs.srv.legacyTasks(req.version) || msg.Method == mcp.MethodTasksUpdate {
			fail(out, msg.ID, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method not found: %s (mcpx gives tasks to hosts of %s)", msg.Method, mcp.Version20251125))
			break
		}
		admitted = hs.admit(req, taskHandlers[msg.Method])
	case mcp.MethodSubscriptionsListen:
		if !req.modern {
			fail(out, msg.ID, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method not found: %s (a 2026-07-28 method)", msg.Method))
			break
		}
		admitted = hs.admit(req, (*hostSession).subscriptionsListen)
	default:
		if isSurface(msg.Method, req.modern) { // surfacehost.go
			admitted = hs.admit(req, (*hostSession).serveSurface)
			break
		}
		fail(out, msg.ID, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method not found: %s", msg.Method))
	}
}

// admit registers req and dispatches it to run handle on a handler
// goroutine, and reports whether it did. A request read while the connection closes is refused at
// once, and so is one beyond the connection's limit of requests in flight
// (mcpx.maxCallsPerHost, read per request so that a reload applies): a
// host cannot make mcpx hold unbounded goroutines or upstream requests
// for it.
func (hs *hostSession) admit(req *request, handle handler) bool {
	ctx, cancel := context.WithCancelCause(hs.base)
	entry, err := hs.srv.relay.Registry().AddFor(hs.jobPrincipal(), relay.HostKey{Session: hs.id, ID: req.msg.ID.String()}, req.msg.Method, cancel,
		hs.srv.relay.MaxCallsPerHost())
	if err != nil {
		cancel(nil)
		rpcErr := callError(err, "") // over the limit: mcpx's own error
		if errors.Is(err, relay.ErrDuplicateID) {
			rpcErr = jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: %v", err)
		}
		fail(req.sink, req.msg.ID, rpcErr)
		return false
	}
	req.entry = entry
	req.answered = answeredSink{sink: req.sink, reg: hs.srv.relay.Registry(), entry: entry}
	req.sink = &req.answered
	req.ctx, req.cancel, req.handler = ctx, cancel, handle
	hs.inflight.Add(1)
	ok := hs.dispatch(req)
	if !ok {
		hs.inflight.Add(-1)
		hs.srv.relay.Registry().Remove(entry)
		cancel(nil)
		fail(req.sink, req.msg.ID, callError(&relay.Cause{Kind: relay.Stopping}, ""))
	}
	return ok
}

// execute runs an admitted request's handler, on a handler goroutine,
// then unregisters it and finishes its sink. It reports whether the
// request's call became a job that ran on here: the request was released
// from its session then (its sink finished, its handler counted gone,
// hostjobs.Link.DeadlineReached), and the goroutine, the job manager's since, must end.
func (hs *hostSession) execute(req *request) (released bool) {
	req.handler(hs, req.ctx, req)
	hs.srv.relay.Registry().Remove(req.entry)
	req.cancel(nil)
	if l := req.job.Load(); l != nil && l.Released() {
		return true
	}
	req.sink.finish()
	hs.inflight.Add(-1)
	return false
}

// release gives up req, whose call has become a job that runs on, on the
// goroutine executing it: its sink is finished and it leaves the session
// now, not when that goroutine (the job's from now on) returns, and
// execute then does nothing more for it. The goroutine leaves what runs
// it too (the session's handlers, or its face's shared workers), so that
// neither the session's end nor the face's Close waits for the job.
func (hs *hostSession) release(req *request) {
	req.sink.finish()
	hs.inflight.Add(-1)
	hs.handlers.Done()
	if hs.shared != nil {
		hs.shared.release()
	}
}

// notification handles a host notification. None is ever answered.
func (hs *hostSession) notification(msg *jsonrpc.Message) {
	switch msg.Method {
	case mcp.MethodCancelled:
		var p mcp.CancelledParams
		if json.Unmarshal(msg.Params, &p) != nil || len(p.RequestID) == 0 {
			return
		}
		hs.srv.relay.Registry().CancelHost(relay.HostKey{Session: hs.id, ID: string(bytes.TrimSpace(p.RequestID))},
			&relay.Cause{Kind: relay.HostCancelled, Detail: p.Reason})
	case mcp.MethodInitialized:
	default:
		// Progress for requests mcpx never sent, roots changes, unknown
		// notifications: nothing to do, and never a reply.
	}
}
