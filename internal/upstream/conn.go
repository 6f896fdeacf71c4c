package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// tokenPrefix starts every progress token mcpx mints upstream.
const tokenPrefix = "mcpx-"

// Conn is the client end of one JSON-RPC session with an upstream server,
// over a transport that carries its messages.
type Conn struct {
	server string
	t      transport
	log    *slog.Logger

	// onNotify receives notifications other than progress and
	// cancellation, on the reader goroutine. It must not block.
	onNotify func(*jsonrpc.Message)

	mu      sync.Mutex
	nextID  int64
	pending map[int64]*Request
	err     error // set once the connection is dead

	malformedLog malformedLog // its malformed lines, for the log

	// Requests the upstream sent mcpx (see inbound.go).
	inMu        sync.Mutex
	inbound     map[string]*Inbound              // unanswered, by the upstream's raw id
	completions map[string]func(json.RawMessage) // URL elicitations by elicitationId
}

// Request is one request mcpx sent upstream and has not forgotten.
type Request struct {
	ID     int64
	Method string
	// Token is the progress token sent with the request, "" if none.
	Token string

	onProgress       func(params json.RawMessage)
	onProgressObject func(params *jsonrpc.Object)
	onMessage        func(*jsonrpc.Message)
	onAck            func(params json.RawMessage)
	inbound          InboundHandler // takes the upstream's requests during r; nil: none
	task             string         // the upstream task r follows; "" if none
	// mu is held while progress is delivered, so that once Forget has
	// returned no delivery is under way or will start.
	mu        sync.Mutex
	forgotten bool

	done   chan struct{}
	result json.RawMessage
	err    error
}

// Done is closed when the response arrives or the connection dies.
func (r *Request) Done() <-chan struct{} { return r.done }

// Result returns the response after Done is closed: the raw result, or a
// *jsonrpc.Error from the upstream, or the error that ended the connection.
func (r *Request) Result() (json.RawMessage, error) { return r.result, r.err }

// newConn returns a Conn; its transport is set before first use.
func newConn(server string, log *slog.Logger) *Conn {
	return &Conn{
		server:  server,
		log:     log,
		pending: make(map[int64]*Request),
	}
}

// StartOptions tunes one request.
type StartOptions struct {
	// OnProgress, when set, asks the upstream for progress under a fresh
	// token and receives each notification's raw params on the reader
	// goroutine, in wire order. It must not block.
	OnProgress func(params json.RawMessage)
	// OnProgressObject is OnProgress with the params as the reader parsed
	// them (to find their token), so that they are parsed once. The
	// callee may edit the object; the reader does not use it afterwards.
	// At most one of the two is set.
	OnProgressObject func(params *jsonrpc.Object)
	// OnMessage, when set, receives the log messages (notifications/message)
	// that arrive on the request's own HTTP stream, on its reader
	// goroutine, instead of the pool's OnNotify (messages.go). It must not
	// block.
	OnMessage func(*jsonrpc.Message)
	// LogLevel is the level a legacy host set for itself (logging/setLevel,
	// else mcpx's default): a modern upstream logs only for a request whose
	// _meta carries one, so Session.Start stamps it there when the request
	// carries none and the upstream declared logging. Legacy sessions
	// ignore it.
	LogLevel string
	// OnAcknowledged, for a subscriptions/listen, receives the params of
	// the upstream's notifications/subscriptions/acknowledged for it, on
	// the reader goroutine. It must not block.
	OnAcknowledged func(params json.RawMessage)
	// Inbound, when set, takes the requests the upstream sends mcpx that
	// belong to this request (elicitation, sampling, roots).
	Inbound InboundHandler
	// Task names the upstream task the request follows (a tasks/result):
	// a request the upstream sends whose related-task _meta names it
	// belongs to this request, whatever else is in flight.
	Task string
}

// Start sends a request. params is the request's params object; Start adds
// the progress token to its _meta when asked. The caller waits on Done and
// must call Forget (or Cancel on the Session) if it stops waiting.
func (c *Conn) Start(method string, params *jsonrpc.Object, opts StartOptions) (*Request, error) {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.nextID++
	r := &Request{ID: c.nextID, Method: method, done: make(chan struct{}),
		onProgress: opts.OnProgress, onProgressObject: opts.OnProgressObject, onMessage: opts.OnMessage, onAck: opts.OnAcknowledged, inbound: opts.Inbound, task: opts.Task}
	if opts.OnProgress != nil || opts.OnProgressObject != nil {
		// "mcpx-<id>", quoted (set in _meta), and its inside (the token).
		quoted := append(make([]byte, 0, len(tokenPrefix)+22), '"')
		quoted = strconv.AppendInt(append(quoted, tokenPrefix...), r.ID, 10)
		r.Token = string(quoted[1:])
		if params == nil {
			params = &jsonrpc.Object{}
		}
		mcp.SetMeta(params, mcp.MetaProgressToken, append(quoted, '"'))
	}
	c.pending[r.ID] = r
	c.mu.Unlock()

	var err error
	if lt, ok := c.t.(lineTransport); ok {
		err = lt.sendLine(jsonrpc.EncodeRequest(r.ID, method, params))
	} else {
		var raw json.RawMessage
		if params != nil {
			raw = params.Bytes()
		}
		err = c.t.send(r, jsonrpc.NewRequest(jsonrpc.NewIntID(r.ID), method, raw))
	}
	if err != nil {
		c.Forget(r)
		var full *QueueFullError
		if errors.As(err, &full) {
			return nil, err // back-pressure: the connection carries on
		}
		return nil, c.fail(fmt.Errorf("writing to upstream %q: %w", c.server, err))
	}
	return r, nil
}

// Forget stops tracking r: a late response or progress for it is dropped.
// When Forget returns, no progress delivery for r is under way; it must not
// be called from r's own OnProgress. It reports whether r was still waiting
// for its response.
func (c *Conn) Forget(r *Request) bool {
	c.mu.Lock()
	waiting := c.pending[r.ID] == r
	if waiting {
		delete(c.pending, r.ID)
	}
	c.mu.Unlock()
	r.mu.Lock()
	r.forgotten = true
	r.mu.Unlock()
	return waiting
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params json.RawMessage) error {
	if err := c.t.send(nil, jsonrpc.NewNotification(method, params)); err != nil {
		return c.fail(fmt.Errorf("writing to upstream %q: %w", c.server, err))
	}
	return nil
}

// Err returns the error that ended the connection, or nil while it lives.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Pending returns how many requests wait for a response.
func (c *Conn) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// fail ends the connection: every waiting request fails with err, and so
// does every later Start. It returns the first error that ended it.
func (c *Conn) fail(err error) error {
	c.mu.Lock()
	if c.err != nil {
		err = c.err
		c.mu.Unlock()
		return err
	}
	c.err = err
	pending := c.pending
	c.pending = make(map[int64]*Request)
	c.mu.Unlock()
	c.logMalformedSuppressed(c.malformedLog.flush())
	for _, r := range pending {
		r.err = err
		close(r.done)
	}
	c.dropInbound(err)
	return err
}

// errClosedOutput ends a connection whose upstream closed its stdout.
var errClosedOutput = errors.New("closed its output")

// readLoop reads newline-delimited messages until the stream ends, then
// returns the error that ended it (io.EOF at a clean end).
func (c *Conn) readLoop(r *jsonrpc.Reader) error {
	for {
		line, err := r.ReadLine()
		if err != nil {
			var over *jsonrpc.OversizeError
			if errors.As(err, &over) {
				c.oversize(over)
				continue
			}
			return err
		}
		c.deliver(line)
	}
}

// deliver handles one message from the upstream, whatever carried it.
func (c *Conn) deliver(data []byte) {
	c.deliverOn(nil, data)
}

// deliverOn handles one message that arrived on the stream of request via
// (nil: a stream that belongs to no request).
func (c *Conn) deliverOn(via *Request, data []byte) {
	msg, err := jsonrpc.Decode(data)
	if err != nil {
		c.malformed(msg, data, err)
		return
	}
	c.dispatch(msg, via)
}

func (c *Conn) dispatch(msg *jsonrpc.Message, via *Request) {
	switch {
	case msg.IsResponse():
		id, ok := msg.ID.Int()
		if !ok {
			c.log.Warn("upstream answered an id mcpx never sent", "server", c.server, "id", msg.ID.String())
			return
		}
		c.mu.Lock()
		r := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if r == nil {
			c.log.Debug("dropped a late response", "server", c.server, "id", id)
			return
		}
		if msg.Error != nil {
			r.err = msg.Error
		} else {
			r.result = msg.Result
		}
		close(r.done)
	case msg.Method == mcp.MethodProgress:
		c.progress(msg.Params)
	case msg.IsRequest():
		c.serverRequest(msg, via)
	case msg.Method == mcp.MethodCancelled:
		c.inboundCancelled(msg.Params)
	case msg.Method == mcp.MethodElicitationComplete:
		c.elicitationComplete(msg.Params)
	case msg.Method == mcp.MethodSubscriptionsAcknowledged && c.acknowledged(msg.Params):
	default:
		if c.onNotify != nil {
			c.onNotify(msg)
		}
	}
}

// progress hands a progress notification to the request that owns its token.
func (c *Conn) progress(params json.RawMessage) {
	obj, err := jsonrpc.ParseObject(params)
	if err != nil {
		return
	}
	raw, _ := obj.Get(mcp.MetaProgressToken)
	token, ok := jsonrpc.Unquote(raw)
	if !ok || !strings.HasPrefix(token, tokenPrefix) {
		c.log.Debug("dropped progress with a token mcpx did not mint", "server", c.server, "token", string(raw))
		return
	}
	id, err := strconv.ParseInt(token[len(tokenPrefix):], 10, 64)
	if err != nil {
		return
	}
	c.mu.Lock()
	r := c.pending[id]
	c.mu.Unlock()
	if r == nil || r.Token != token || r.onProgress == nil && r.onProgressObject == nil {
		return // late: the request was answered or forgotten
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.forgotten:
	case r.onProgressObject != nil:
		r.onProgressObject(obj)
	default:
		r.onProgress(params)
	}
}

// malformed handles a line that is not a valid message. When it carried the
// id of a waiting request, that request fails: waiting on would hang it.
func (c *Conn) malformed(msg *jsonrpc.Message, line []byte, err error) {
	if more, log := c.malformedLog.note(time.Now()); log {
		c.logMalformedSuppressed(more)
		c.log.Warn("upstream sent a malformed message", "server", c.server, "err", err, "line", truncate(line, 200))
	}
	if msg != nil {
		c.failID(msg.ID, fmt.Errorf("upstream %q sent a malformed response: %w", c.server, err))
	}
}

func (c *Conn) oversize(over *jsonrpc.OversizeError) {
	c.log.Warn("upstream sent an oversize message", "server", c.server, "limit", over.Limit, "id", over.ID.String())
	c.failID(over.ID, fmt.Errorf("upstream %q sent a response over the %d-byte message limit", c.server, over.Limit))
}

func (c *Conn) failID(id jsonrpc.ID, err error) {
	n, ok := id.Int()
	if !ok {
		return
	}
	c.mu.Lock()
	r := c.pending[n]
	delete(c.pending, n)
	c.mu.Unlock()
	if r != nil {
		r.err = err
		close(r.done)
	}
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
