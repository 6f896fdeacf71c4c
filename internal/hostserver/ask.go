package hostserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"mcpx/internal/hostjobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// answer takes a response the host sent: the answer to one of mcpx's
// questions, or (late, or an id mcpx never used) nothing.
func (hs *hostSession) answer(msg *jsonrpc.Message) {
	if !hs.questions.Answer(msg) {
		hs.srv.log.Debug("dropped a response to no request of mcpx's", "host", hs.id, "id", msg.ID.String())
	}
}

// hostAsker puts an upstream's requests to the host of one legacy call,
// on the call's own stream: the connection (stdio) or the request's
// response stream (HTTP). It is the hostjobs.LiveAsker of a call that
// may become a job.
type hostAsker struct {
	hs   *hostSession
	sink sink
	caps json.RawMessage
}

// asker returns the relay.Asker of req's host, nil when mcpx cannot ask
// it anything. A 2026-07-28 host is never sent requests: its asker only
// says what its request's capabilities cover (the relay passes those
// questions back as input_required).
func (hs *hostSession) asker(req *request) relay.Asker {
	if req.modern {
		return capsAsker(req.caps)
	}
	if !req.sink.carriesRequests() {
		return nil
	}
	req.asker = hostAsker{hs: hs, sink: req.sink, caps: req.caps}
	return &req.asker
}

// capsAsker is the asker of a 2026-07-28 request: what it can be asked,
// by its own capabilities (docs/protocol-notes.md §7.2), and never asked directly.
type capsAsker json.RawMessage

func (c capsAsker) Can(method string, params json.RawMessage) bool {
	return declares(json.RawMessage(c), method, params)
}

func (capsAsker) Ask(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("a 2026-07-28 host is never sent requests")
}

func (capsAsker) Notify(string, json.RawMessage) {}

// principal names the host for the requestState mcpx seals: its stream
// connection (stdio, or a daemon connection carrying one), or, over HTTP,
// the bearer token's holder: one host with a named token, every host
// with the default token (hosthttp.Access).
func (hs *hostSession) principal() string {
	if hs.out != nil {
		if hs.connPrincipal != "" {
			return hs.connPrincipal
		}
		return "conn:" + hs.id
	}
	return hs.who.ID()
}

// sessionKey names the host to the pool, for the upstream sessions of its
// own that perHost servers give it: its session (a stream connection, a
// legacy HTTP session), which ends when the host leaves (endHost); or,
// for a stateless 2026-07-28 request, whose host session lives as long
// as the request, its principal, so that one such host does not start a
// session per request (those sessions end by the server's idle stop).
func (hs *hostSession) sessionKey() string {
	if hs.stateless {
		return hs.principal()
	}
	return hs.id
}

// endHost stops the upstream sessions of hs's own, once none of its
// handlers runs (none can start another): the host has left. A stateless
// request's key is its principal's, which outlives it.
func (s *Server) endHost(hs *hostSession) {
	if hs.stateless {
		return
	}
	hs.handlers.Wait()
	s.relay.Pool().EndHost(hs.sessionKey())
}

// resumeOf returns a 2026-07-28 retry's requestState and inputResponses.
func resumeOf(req *request) *relay.Resume {
	if !req.modern {
		return nil
	}
	raw, ok := req.params.Get("requestState")
	var state string
	if !ok || json.Unmarshal(raw, &state) != nil {
		return nil
	}
	responses, _ := req.params.Get("inputResponses")
	return &relay.Resume{State: state, Responses: responses}
}

func (a *hostAsker) Can(method string, params json.RawMessage) bool {
	return declares(a.caps, method, params)
}

// declares reports whether client capabilities caps cover method with
// params: sampling and roots by their presence; elicitation by its mode,
// where an empty elicitation object means form only.
func declares(caps json.RawMessage, method string, params json.RawMessage) bool {
	var c map[string]json.RawMessage
	if json.Unmarshal(caps, &c) != nil {
		return false
	}
	key := map[string]string{
		mcp.MethodElicitationCreate: "elicitation",
		mcp.MethodSamplingCreate:    "sampling",
		mcp.MethodRootsList:         "roots",
	}[method]
	raw, ok := c[key]
	if key == "" || !ok || string(raw) == "null" {
		return false
	}
	if key != "elicitation" {
		return true
	}
	var p struct {
		Mode string `json:"mode"`
	}
	_ = json.Unmarshal(params, &p)
	if p.Mode == "" {
		p.Mode = "form"
	}
	var modes map[string]json.RawMessage
	if json.Unmarshal(raw, &modes) != nil {
		return false
	}
	if len(modes) == 0 {
		return p.Mode == "form"
	}
	_, ok = modes[p.Mode]
	return ok
}

func (a *hostAsker) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	id, ch, err := a.Put(method, params)
	defer a.hs.questions.Remove(id)
	if err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		return hostjobs.AnswerOf(m)
	case <-ctx.Done():
	}
	cause := context.Cause(ctx)
	_ = a.Push(hostjobs.Withdrawal(id, cause))
	return nil, cause
}

// Put registers a question under a new id of mcpx's and queues it on
// the call's stream; the caller removes id once done with it. The error
// says the stream has ended (notPut).
func (a *hostAsker) Put(method string, params json.RawMessage) (jsonrpc.ID, <-chan *jsonrpc.Message, error) {
	id, ch := a.hs.questions.Add(jsonrpc.NewIntID)
	if a.Push(jsonrpc.NewRequest(id, method, params).Encode()) != nil {
		return id, ch, notPut(method)
	}
	return id, ch, nil
}

// Push queues line, a request of mcpx's or what withdraws one, on the
// call's stream; an error if that stream has ended, which nothing would
// then carry to the host (an HTTP response stream ends with its answer).
func (a *hostAsker) Push(line []byte) error {
	if q := a.sink.queue(); q != nil {
		return q.Push(line)
	}
	a.sink.pushWhile(nil, line)
	return nil
}

// notPut is the error of a question that no stream could carry to the
// host: its request's has ended.
func notPut(method string) error {
	return fmt.Errorf("mcpx could not put this %s to its host: the stream of the host's request has ended", method)
}

func (a *hostAsker) Notify(method string, params json.RawMessage) {
	a.sink.pushWhile(nil, jsonrpc.NewNotification(method, params).Encode())
}

// upstreamCaps are the capabilities mcpx stamps on a host request it
// sends a 2026-07-28 upstream (per request, never a union of hosts): the
// host's own elicitation, sampling and roots, which mcpx can carry back
// to it, as the host wrote them; nothing else (upstreamCallCaps adds the
// tasks extension for a tools/call). A legacy host that cannot be sent requests on this call's stream
// gets none.
//
// A host declares the same capabilities on request after request (a
// legacy host once, at initialize), so the last answer is kept: the
// decoding was a tenth of a relayed call's CPU.
func (hs *hostSession) upstreamCaps(req *request) json.RawMessage {
	carries := req.modern || req.sink.carriesRequests()
	hs.capsMu.Lock()
	defer hs.capsMu.Unlock()
	if m := &hs.capsMemo; m.out == nil || m.carries != carries || string(m.caps) != string(req.caps) {
		*m = capsMemo{caps: bytes.Clone(req.caps), carries: carries, out: upstreamCaps(req.caps, carries)}
	}
	return hs.capsMemo.out
}

// upstreamCallCaps are upstreamCaps for a tools/call, naming the tasks
// extension when mcpx follows an upstream's tasks for the call: a legacy
// host's (it gets a plain call, or a task or job of mcpx's own, and is
// asked the task's questions during the call), or a 2026-07-28 host's
// call that is a task of mcpx's (its questions wait in that task). A
// 2026-07-28 call that is no task of mcpx's names only what its host
// named: its questions go back as input_required, which an upstream
// task's cannot.
func (hs *hostSession) upstreamCallCaps(req *request) json.RawMessage {
	caps := hs.upstreamCaps(req)
	if req.modern && (req.task == nil || !req.task.modern) {
		return caps
	}
	hs.capsMu.Lock()
	defer hs.capsMu.Unlock()
	m := &hs.capsMemo
	if string(m.out) != string(caps) || m.withTasks == nil {
		m.withTasks = withTasksExtension(caps)
	}
	return m.withTasks
}

// withTasksExtension returns client capabilities caps naming the tasks
// extension too.
func withTasksExtension(caps json.RawMessage) json.RawMessage {
	c, err := jsonrpc.ParseObject(caps)
	if err != nil {
		c = &jsonrpc.Object{}
	}
	ext := &jsonrpc.Object{}
	if raw, ok := c.Get("extensions"); ok {
		if parsed, err := jsonrpc.ParseObject(raw); err == nil {
			ext = parsed
		}
	}
	ext.Set(mcp.ExtensionTasks, json.RawMessage(`{}`))
	c.SetObject("extensions", ext)
	return c.Bytes()
}

// capsMemo is a host's last upstreamCaps: what it was computed from, and
// the result (never edited in place: it is only ever set into an object).
type capsMemo struct {
	caps    json.RawMessage
	carries bool
	out     json.RawMessage
	// withTasks is out naming the tasks extension (upstreamCallCaps).
	withTasks json.RawMessage
}

// upstreamCaps computes hostSession.upstreamCaps from the host request's
// capabilities, and whether mcpx can send the host requests on the call's
// stream.
//
// The capabilities are read with jsonrpc.ParseObject, not into a map (a
// 2026-07-28 HTTP request is a host session of its own, so the memo above
// does not spare it): the same members, the last of duplicates, the same
// bytes.
func upstreamCaps(caps json.RawMessage, carries bool) json.RawMessage {
	if !carries {
		return json.RawMessage("{}")
	}
	c, err := jsonrpc.ParseObject(caps)
	if err != nil {
		return json.RawMessage("{}")
	}
	out := &jsonrpc.Object{}
	for _, k := range []string{"elicitation", "sampling", "roots"} {
		if raw, ok := c.Get(k); ok && string(raw) != "null" {
			out.Set(k, raw)
		}
	}
	return out.Bytes()
}
