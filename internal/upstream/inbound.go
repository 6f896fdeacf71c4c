package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// relayedCapabilities are the client capabilities mcpx declares to a
// legacy upstream: the requests it can carry to a host. Whether a given
// host can answer is settled per request (a host that did not declare one
// gets the upstream an error).
var relayedCapabilities = json.RawMessage(`{"elicitation":{"form":{},"url":{}},"sampling":{},"roots":{}}`)

// Inbound is one request an upstream sent mcpx: elicitation/create,
// sampling/createMessage or roots/list. Its handler answers it once, with
// Reply or Fail, unless the upstream cancels it first: then Cancelled is
// closed and nothing more is sent for it.
type Inbound struct {
	Method string
	Params json.RawMessage
	ID     jsonrpc.ID // the upstream's own id

	conn      *Conn
	cancelled chan struct{}
	reason    string // why it was cancelled; set before cancelled is closed

	mu       sync.Mutex
	done     bool
	onCancel func(reason string)
}

// Cancelled is closed when the upstream cancelled the request or its
// connection ended; Reason says why.
func (in *Inbound) Cancelled() <-chan struct{} { return in.cancelled }

// Reason is why the request was cancelled, once Cancelled is closed.
func (in *Inbound) Reason() string { return in.reason }

// Answered reports whether the request has been answered, or withdrawn
// by the upstream.
func (in *Inbound) Answered() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.done
}

// Reply answers the request with result.
func (in *Inbound) Reply(result json.RawMessage) { in.answer(jsonrpc.NewResult(in.ID, result)) }

// Fail answers the request with err.
func (in *Inbound) Fail(err *jsonrpc.Error) { in.answer(jsonrpc.NewError(in.ID, err)) }

func (in *Inbound) answer(msg *jsonrpc.Message) {
	if !in.end() {
		return
	}
	if err := in.conn.t.send(nil, msg); err != nil {
		in.conn.fail(fmt.Errorf("writing to upstream %q: %w", in.conn.server, err))
	}
}

// end marks the request settled and unregisters it; false if it already was.
func (in *Inbound) end() bool {
	in.mu.Lock()
	if in.done {
		in.mu.Unlock()
		return false
	}
	in.done = true
	in.mu.Unlock()
	c := in.conn
	c.inMu.Lock()
	if c.inbound[in.ID.String()] == in {
		delete(c.inbound, in.ID.String())
	}
	c.inMu.Unlock()
	return true
}

func (in *Inbound) cancel(reason string) {
	if !in.end() {
		return
	}
	in.reason = reason
	close(in.cancelled)
	in.mu.Lock()
	fn := in.onCancel
	in.mu.Unlock()
	if fn != nil {
		fn(reason)
	}
}

// OnCancel makes fn run (on the reader goroutine; it must not block) if
// the upstream cancels the request, or its connection ends, before it is
// answered.
func (in *Inbound) OnCancel(fn func(reason string)) {
	in.mu.Lock()
	in.onCancel = fn
	done := in.done
	in.mu.Unlock()
	if done {
		select {
		case <-in.cancelled:
			fn(in.reason)
		default:
		}
	}
}

// RouteCompletion hands the upstream's notifications/elicitation/complete
// for elicitationID to fn (on the reader goroutine; it must not block)
// until remove is called. A URL-mode elicitation's completion goes only
// to the host it was relayed to.
func (in *Inbound) RouteCompletion(elicitationID string, fn func(params json.RawMessage)) (remove func()) {
	c := in.conn
	c.inMu.Lock()
	if c.completions == nil {
		c.completions = map[string]func(json.RawMessage){}
	}
	c.completions[elicitationID] = fn
	c.inMu.Unlock()
	return func() {
		c.inMu.Lock()
		delete(c.completions, elicitationID)
		c.inMu.Unlock()
	}
}

// InboundHandler takes the requests an upstream sends mcpx during one of
// mcpx's requests (a tool call).
type InboundHandler interface {
	// Accepts reports whether the host behind the call can answer method
	// with params (it declared the capability, and the mode).
	Accepts(method string, params json.RawMessage) bool
	// Handle takes an accepted request. It runs on the reader goroutine
	// and must not block.
	Handle(in *Inbound)
	// Owner names the host behind the call: a request that cannot be tied
	// to one call is given to the oldest that can answer it only when all
	// such calls share one owner (see attribute).
	Owner() string
}

// Refuser is an InboundHandler that can say why it does not accept a
// request (Accepts false): the upstream is answered with its error,
// instead of hearing that the host did not declare the capability; nil
// leaves that answer.
type Refuser interface {
	Refusal(method string, params json.RawMessage) *jsonrpc.Error
}

// serverRequest handles a request the upstream sent mcpx. via is the
// request on whose own stream it arrived (legacy HTTP), nil when the
// transport carries no such link (stdio, HTTP+SSE, standalone streams).
func (c *Conn) serverRequest(msg *jsonrpc.Message, via *Request) {
	switch msg.Method {
	case mcp.MethodPing:
		c.reply(jsonrpc.NewResult(msg.ID, json.RawMessage("{}")))
		return
	case mcp.MethodElicitationCreate, mcp.MethodSamplingCreate, mcp.MethodRootsList:
	default:
		c.reply(jsonrpc.NewError(msg.ID, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "mcpx does not serve %q to upstreams", msg.Method)))
		return
	}
	in := &Inbound{Method: msg.Method, Params: msg.Params, ID: msg.ID, conn: c, cancelled: make(chan struct{})}
	key := msg.ID.String()
	c.inMu.Lock()
	_, dup := c.inbound[key]
	if !dup {
		if c.inbound == nil {
			c.inbound = map[string]*Inbound{}
		}
		c.inbound[key] = in
	}
	c.inMu.Unlock()
	if dup {
		c.reply(jsonrpc.NewError(msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: id %s is in use by a request mcpx has not answered", key)))
		return
	}
	r, err := c.attribute(msg, via)
	if err != nil {
		c.log.Info("refused an upstream request", "server", c.server, "method", msg.Method, "id", key, "why", err.Message)
		in.Fail(err)
		return
	}
	if !r.inbound.Accepts(msg.Method, msg.Params) {
		if rf, ok := r.inbound.(Refuser); ok {
			if err := rf.Refusal(msg.Method, msg.Params); err != nil {
				in.Fail(err)
				return
			}
		}
		in.Fail(jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "the host of the call this %s belongs to did not declare the capability it needs", msg.Method))
		return
	}
	r.inbound.Handle(in)
}

// attribute finds the call a server request belongs to: the request whose
// stream carried it; else the request whose progress token its _meta
// names; else the request following the task its related-task _meta
// names (a tasks/result mcpx waits on); else the only tool call in flight on the session; else, of
// several, the oldest whose host can answer it, if every call in flight
// whose host could answer it is that host's. Calls of two hosts that could
// both answer are ambiguous on a transport that links no request to a call
// (stdio, HTTP+SSE): the request is refused rather than shown to a host
// that may not be the one asked (a question, or a host's roots, must
// never reach another host). With none in flight it is refused too: no
// host asked for anything.
func (c *Conn) attribute(msg *jsonrpc.Message, via *Request) (*Request, *jsonrpc.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if via != nil {
		if c.pending[via.ID] == via && via.inbound != nil {
			return via, nil
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "mcpx relays %s only during a tool call, and the request it came with is none (or has ended)", msg.Method)
	}
	if r := c.byTokenLocked(msg.Params); r != nil && r.inbound != nil {
		return r, nil
	}
	if r := c.byTaskLocked(msg.Params); r != nil && r.inbound != nil {
		return r, nil
	}
	var oldest, oldestAccepting *Request
	owners := map[string]bool{}
	for _, r := range c.pending {
		if r.inbound == nil {
			continue
		}
		if oldest == nil || r.ID < oldest.ID {
			oldest = r
		}
		if r.inbound.Accepts(msg.Method, msg.Params) {
			owners[r.inbound.Owner()] = true
			if oldestAccepting == nil || r.ID < oldestAccepting.ID {
				oldestAccepting = r
			}
		}
	}
	switch {
	case len(owners) > 1:
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError,
			"mcpx cannot tell which tool call this %s belongs to: calls of %d hosts that could answer it are in flight on this session, and the request names none of them (send it with the call's progress token in _meta)", msg.Method, len(owners))
	case oldestAccepting != nil:
		return oldestAccepting, nil
	case oldest != nil:
		return oldest, nil
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError,
		"mcpx relays %s to a host only during one of its tool calls, and none is in flight on this session", msg.Method)
}

// byTokenLocked returns the pending request whose progress token
// params._meta.progressToken names, if any. c.mu is held.
func (c *Conn) byTokenLocked(params json.RawMessage) *Request {
	obj, err := jsonrpc.ParseObject(params)
	if err != nil {
		return nil
	}
	raw, ok := mcp.Meta(obj).Get(mcp.MetaProgressToken)
	var token string
	if !ok || json.Unmarshal(raw, &token) != nil || !strings.HasPrefix(token, tokenPrefix) {
		return nil
	}
	id, err := strconv.ParseInt(token[len(tokenPrefix):], 10, 64)
	if err != nil {
		return nil
	}
	if r := c.pending[id]; r != nil && r.Token == token {
		return r
	}
	return nil
}

// byTaskLocked returns the pending request that follows the task
// params._meta's related-task names, if any. c.mu is held.
func (c *Conn) byTaskLocked(params json.RawMessage) *Request {
	if !bytes.Contains(params, []byte(mcp.MetaRelatedTask)) {
		return nil // most requests name no task, and are not parsed again
	}
	obj, err := jsonrpc.ParseObject(params)
	if err != nil {
		return nil
	}
	raw, ok := mcp.Meta(obj).Get(mcp.MetaRelatedTask)
	var rel struct {
		TaskID string `json:"taskId"`
	}
	if !ok || json.Unmarshal(raw, &rel) != nil || rel.TaskID == "" {
		return nil
	}
	var found *Request
	for _, r := range c.pending {
		if r.task == rel.TaskID && (found == nil || r.ID < found.ID) {
			found = r
		}
	}
	return found
}

// inboundCancelled handles the upstream's notifications/cancelled for a
// request it sent mcpx.
func (c *Conn) inboundCancelled(params json.RawMessage) {
	var p mcp.CancelledParams
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	c.inMu.Lock()
	in := c.inbound[string(bytes.TrimSpace(p.RequestID))]
	c.inMu.Unlock()
	if in == nil {
		c.listenCancelled(bytes.TrimSpace(p.RequestID), p.Reason) // subscribe.go
		return
	}
	reason := "the upstream cancelled it"
	if p.Reason != "" {
		reason += ": " + p.Reason
	}
	in.cancel(reason)
}

// elicitationComplete routes notifications/elicitation/complete to the
// host its elicitation went to.
func (c *Conn) elicitationComplete(params json.RawMessage) {
	var p struct {
		ElicitationID string `json:"elicitationId"`
	}
	if json.Unmarshal(params, &p) != nil || p.ElicitationID == "" {
		return
	}
	c.inMu.Lock()
	fn := c.completions[p.ElicitationID]
	delete(c.completions, p.ElicitationID)
	c.inMu.Unlock()
	if fn == nil {
		c.log.Debug("dropped the completion of an elicitation no host waits for", "server", c.server, "elicitationId", p.ElicitationID)
		return
	}
	fn(params)
}

// dropInbound cancels every request the upstream sent and mcpx has not
// answered: the connection has ended.
func (c *Conn) dropInbound(why error) {
	c.inMu.Lock()
	var all []*Inbound
	for _, in := range c.inbound {
		all = append(all, in)
	}
	c.completions = nil
	c.inMu.Unlock()
	for _, in := range all {
		in.cancel(why.Error())
	}
}

func (c *Conn) reply(msg *jsonrpc.Message) {
	if err := c.t.send(nil, msg); err != nil {
		c.fail(fmt.Errorf("writing to upstream %q: %w", c.server, err))
	}
}
