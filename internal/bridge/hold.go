package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
	"mcpx/internal/upstream"
)

// defaultInputTimeout is how long a held call waits for its host's retry
// when the config sets no mcpx.inputTimeout.
const defaultInputTimeout = 5 * time.Minute

// heldCall is a legacy upstream's call whose questions went to a
// 2026-07-28 host as input_required (docs/protocol-notes.md §7.5): the upstream
// request keeps running, with its call slot, until the host retries
// (resume), or the input timeout cancels it. It needs no goroutine: the
// upstream connection keeps its request, and a timer its expiry.
type heldCall struct {
	id        uint64
	live      *relay.Live // its session, call slot and questions
	req       *upstream.Request
	server    string
	tool      string
	principal string
	digest    string
	expiry    *time.Timer
	n         int // keys minted so far: mcpx-1, mcpx-2, ...

	mu       sync.Mutex
	pending  map[string]*upstream.Inbound // by inputRequests key
	removers []func()                     // of the completion routes of its URL elicitations
}

// holds are the held calls, by id; an id is used once, so a state that
// was resumed (or expired) names nothing.
type holds struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]*heldCall
}

func (h *holds) put(hc *heldCall) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[uint64]*heldCall{}
	}
	h.next++
	hc.id = h.next
	h.m[hc.id] = hc
}

func (h *holds) remove(hc *heldCall) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m[hc.id] != hc {
		return false
	}
	delete(h.m, hc.id)
	return true
}

func (h *holds) take(id uint64) *heldCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	hc := h.m[id]
	delete(h.m, id)
	return hc
}

func (b *Bridge) inputTimeout() time.Duration {
	if cfg := b.r.Config(); cfg != nil && cfg.InputTimeout > 0 {
		return cfg.InputTimeout
	}
	return defaultInputTimeout
}

// stateError is the -32602 a retry with a refused requestState gets.
func stateError(err error) *jsonrpc.Error {
	return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: %v", err)
}

// hold holds hc and returns the input_required result that asks its host
// what the upstream asked: each request under a key of mcpx's, and a
// requestState sealed for this host, this request and this hold.
func (b *Bridge) hold(hc *heldCall) (json.RawMessage, error) {
	queued := hc.live.Queued()
	hc.mu.Lock()
	for _, in := range queued {
		hc.n++
		key := fmt.Sprintf("mcpx-%d", hc.n)
		hc.pending[key] = in
		in.OnCancel(func(string) {
			hc.mu.Lock()
			delete(hc.pending, key)
			hc.mu.Unlock()
		})
		if id := mcp.URLElicitationID(in.Method, in.Params); id != "" {
			// The upstream may announce the URL interaction's end with
			// notifications/elicitation/complete, which 2026-07-28
			// removed, with elicitationId (changelog item 11: "the client
			// learns the outcome of an out-of-band interaction by
			// retrying the original request"). The host has nothing to
			// receive it on, nor a use for it: its retry resumes this
			// call, whose result says how the interaction went. Dropped,
			// knowingly.
			server, upID := hc.server, hc.req.ID
			hc.removers = append(hc.removers, in.RouteCompletion(id, func(json.RawMessage) {
				b.log.Debug("dropped notifications/elicitation/complete: a 2026-07-28 host has no such notification, and learns the outcome from its retry",
					"server", server, "upstreamId", upID, "elicitationId", id)
			}))
		}
	}
	requests := map[string]inputRequest{}
	for k, in := range hc.pending {
		// Always with params: go-sdk v1.8.0's client fails on an input
		// request without them (roots/list has none of its own).
		params := in.Params
		if len(params) == 0 {
			params = json.RawMessage("{}")
		}
		params = withoutElicitationID(in.Method, params)
		requests[k] = inputRequest{in.Method, params}
	}
	hc.mu.Unlock()

	d := b.inputTimeout()
	b.holds.put(hc)
	hc.expiry = time.AfterFunc(d, func() {
		if b.holds.remove(hc) {
			b.expire(hc, fmt.Sprintf("the host did not retry within %s of mcpx's input_required", relay.FormatDuration(d)))
		}
	})
	state := b.sealer.Load().seal(holdState{Hold: hc.id, Principal: hc.principal, Server: hc.server, Tool: hc.tool,
		Digest: hc.digest, Expires: time.Now().Add(d).UnixMilli(), Instance: b.instance})
	keys := make([]string, 0, len(requests))
	for k := range requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.log.Info("holding an upstream call for the host's input", "server", hc.server, "tool", hc.tool, "upstreamId", hc.req.ID, "keys", keys, "principal", hc.principal)
	return inputRequiredResult(requests, state), nil
}

// inputRequest is one request of an input_required result mcpx makes.
type inputRequest struct {
	Method string
	Params json.RawMessage
}

// inputRequiredResult is the input_required result asking requests, keys
// in order, under state. Params go as they are: json.Marshal would escape
// the <, > and & of a relayed URL.
func inputRequiredResult(requests map[string]inputRequest, state string) json.RawMessage {
	keys := make([]string, 0, len(requests))
	for k := range requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	inputs := &jsonrpc.Object{}
	for _, k := range keys {
		q := &jsonrpc.Object{}
		q.Set("method", jsonrpc.Quote(requests[k].Method))
		q.Set("params", requests[k].Params)
		inputs.SetObject(k, q)
	}
	res := &jsonrpc.Object{}
	res.Set("resultType", jsonrpc.Quote(mcp.ResultTypeInputRequired))
	res.SetObject("inputRequests", inputs)
	res.Set("requestState", jsonrpc.Quote(state))
	return res.Bytes()
}

// expire ends a held call its host never came back for: the upstream
// call is cancelled with why, its questions are answered with an error.
func (b *Bridge) expire(hc *heldCall, why string) {
	if hc.live.Session().Cancel(hc.req, why) {
		b.log.Info("cancelled upstream call", "server", hc.server, "tool", hc.tool, "upstreamId", hc.req.ID, "reason", why)
	}
	hc.finish(why)
}

// finish answers the held call's questions still pending with an error
// and gives back what it held.
func (hc *heldCall) finish(why string) {
	hc.mu.Lock()
	pending := hc.pending
	hc.pending = map[string]*upstream.Inbound{}
	removers := hc.removers
	hc.removers = nil
	hc.mu.Unlock()
	for _, rm := range removers {
		rm()
	}
	for _, in := range pending {
		in.Fail(jsonrpc.Errorf(jsonrpc.CodeInternalError, "the tool call this %s belongs to has ended: %s", in.Method, why))
	}
	hc.live.Release()
}

// resume continues a held call with its host's retry: the state must be
// one mcpx sealed, unexpired, for this host and this request, naming a
// call still held (else -32602). The host's inputResponses answer the
// upstream's questions; what they leave unanswered is asked again; then
// the call is awaited as any other, under the retry's timers.
func (b *Bridge) resume(ctx context.Context, e *relay.Entry, c relay.Call) (json.RawMessage, error) {
	args, _ := c.Params.Get("arguments")
	st, err := b.sealer.Load().open(c.Resume.State, c.Principal, requestDigest(c.Server, c.Tool, args), time.Now())
	if err != nil {
		if errors.Is(err, errStateOther) {
			// Both principals, never a token: which host tried another's state.
			b.log.Info("refused a requestState issued to another host", "server", c.Server, "tool", c.Tool, "issuedTo", st.Principal, "presentedBy", c.Principal)
		}
		return nil, stateError(err)
	}
	if len(st.URL) > 0 {
		return b.reissue(ctx, e, c, st)
	}
	if st.Up != nil {
		return b.resumeUpstream(ctx, e, c, st)
	}
	if st.Instance != b.instance {
		b.log.Info("refused a requestState of a call another replica holds", "server", c.Server, "tool", c.Tool)
		return nil, stateError(errStateReplica)
	}
	hc := b.holds.take(st.Hold)
	if hc == nil {
		return nil, stateError(errStateGone)
	}
	hc.expiry.Stop()
	var responses map[string]json.RawMessage
	_ = json.Unmarshal(c.Resume.Responses, &responses)
	hc.mu.Lock()
	for k, in := range hc.pending {
		if raw, ok := responses[k]; ok {
			in.Reply(raw)
			delete(hc.pending, k)
		}
	}
	unanswered := len(hc.pending)
	hc.mu.Unlock()
	if unanswered > 0 {
		return b.hold(hc) // missing inputs: ask again (docs/protocol-notes.md §7.4)
	}

	res, err := hc.live.Resume(ctx, e, c, hc.req)
	if errors.Is(err, relay.ErrHold) {
		return b.hold(hc)
	}
	why := relay.ErrCallEnded.Error()
	if err != nil {
		why = err.Error()
	}
	hc.finish(why)
	return withoutRelatedTask(res), err // a held tasks/result's (upstreamtask.go)
}
