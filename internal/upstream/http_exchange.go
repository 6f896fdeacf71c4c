package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/sse"
)

// What the HTTP transports (Streamable HTTP in either era, and the
// 2024-11-05 HTTP+SSE pair) share: one server's address and limits, the
// life of one transport, and the exchanges of the requests in flight.

// notifyTimeout bounds an HTTP exchange that is not a request: a
// notification or a response mcpx posts, a DELETE, the wait for a stream's
// headers. A request's own exchange has no such bound (a server may hold
// its headers until the result is ready): the request's timers and its
// cancellation end it.
const notifyTimeout = 10 * time.Second

// httpTarget is one configured HTTP server: where it is, the headers every
// request carries, the pool's client, and the limits.
type httpTarget struct {
	server  string
	url     string
	headers map[string]string
	client  *http.Client
	limit   int // bytes of one message: a JSON body or one SSE event
	slots   int // requests in flight at once
	log     *slog.Logger
	poolWG  *sync.WaitGroup
}

// httpBase is the life of one HTTP transport: its context (ended by stop),
// its goroutines, the exchanges of its requests, and its done channel.
type httpBase struct {
	*httpTarget
	conn *Conn

	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup // the transport's goroutines
	slots  chan struct{}

	mu        sync.Mutex
	closed    bool
	exchanges map[int64]*exchange

	stopOnce sync.Once
	done     chan struct{} // closed once every goroutine has ended
}

// exchange is one request's HTTP life: the context that aborts it, and
// whether it reached the server.
type exchange struct {
	r      *Request
	msg    *jsonrpc.Message
	ctx    context.Context
	cancel context.CancelCauseFunc
	sent   atomic.Bool
}

// errTransportClosed is sent for messages given to a stopped transport.
var errTransportClosed = errors.New("the HTTP transport is closed")

// errAbandoned ends the exchange of a request mcpx gave up on.
var errAbandoned = errors.New("request abandoned")

func newHTTPBase(tg *httpTarget, conn *Conn) *httpBase {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &httpBase{
		httpTarget: tg,
		conn:       conn,
		ctx:        ctx,
		cancel:     cancel,
		slots:      make(chan struct{}, max(tg.slots, 1)),
		exchanges:  map[int64]*exchange{},
		done:       make(chan struct{}),
	}
}

// goFunc runs f on a goroutine counted in the pool's and the transport's
// wait groups; it reports false, running nothing, once the transport is
// closed.
func (b *httpBase) goFunc(f func()) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.poolWG.Add(1)
	b.wg.Add(1)
	go func() {
		defer b.poolWG.Done()
		defer b.wg.Done()
		f()
	}()
	return true
}

// shutdown ends the transport once: no new exchanges, every running one
// aborted, then last (if set) runs, then it waits for the transport's
// goroutines and closes done. Later calls wait for the first to finish.
func (b *httpBase) shutdown(cause error, last func()) {
	b.stopOnce.Do(func() {
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		b.cancel(cause)
		if last != nil {
			last()
		}
		b.wg.Wait()
		close(b.done)
	})
}

// expire ends a session the server no longer knows: every waiting call
// fails with err, and the transport is torn down in the background.
func (b *httpBase) expire(err error, stop func()) {
	if b.conn.fail(err) == err {
		b.log.Warn("upstream session ended", "err", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return // stopping already
	}
	// Not closed: the pool still counts the session's goroutines, so its
	// wait group cannot be at zero.
	b.poolWG.Add(1)
	go func() { defer b.poolWG.Done(); stop() }()
}

// start registers r's exchange and runs run on it in a goroutine. The
// exchange ends when run returns.
func (b *httpBase) start(r *Request, msg *jsonrpc.Message, run func(x *exchange)) error {
	ctx, cancel := context.WithCancelCause(b.ctx)
	x := &exchange{r: r, msg: msg, ctx: ctx, cancel: cancel}
	b.mu.Lock()
	b.exchanges[r.ID] = x
	b.mu.Unlock()
	ok := b.goFunc(func() {
		defer b.finish(x)
		run(x)
	})
	if !ok {
		b.finish(x)
		return errTransportClosed
	}
	return nil
}

func (b *httpBase) finish(x *exchange) {
	x.cancel(errAbandoned)
	b.mu.Lock()
	if b.exchanges[x.r.ID] == x {
		delete(b.exchanges, x.r.ID)
	}
	b.mu.Unlock()
}

// take removes and returns r's running exchange, if any.
func (b *httpBase) take(r *Request) *exchange {
	b.mu.Lock()
	defer b.mu.Unlock()
	x := b.exchanges[r.ID]
	if x != nil && x.r == r {
		delete(b.exchanges, r.ID)
		return x
	}
	return nil
}

// acquire waits for a free request slot, as long as ctx lives.
func (b *httpBase) acquire(ctx context.Context) bool {
	select {
	case b.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (b *httpBase) release() { <-b.slots }

// newRequest builds an HTTP request to url carrying the configured headers.
// A body is JSON; every exchange accepts JSON and event streams.
func (b *httpBase) newRequest(ctx context.Context, method, url string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range b.headers {
		req.Header.Set(k, v)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	return req, nil
}

// do sends req. A failure to reach the server is a *reachError.
func (b *httpBase) do(req *http.Request) (*http.Response, error) {
	resp, err := b.client.Do(req)
	if err != nil {
		var uerr *urlError
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, &reachError{method: req.Method, server: b.server, err: err}
	}
	return resp, nil
}

// postExchange sends x's request (from now on a cancel must tell the
// server) and returns the response. A failure to reach the server fails
// x's request, unless x was given up first: nil then, with nothing left
// to do.
func (b *httpBase) postExchange(x *exchange, req *http.Request) *http.Response {
	x.sent.Store(true)
	resp, err := b.do(req)
	if err != nil {
		if x.ctx.Err() == nil {
			b.conn.failRequest(x.r, err)
		}
		return nil
	}
	return resp
}

// reachError is an HTTP exchange that got no answer: the server could not
// be reached, or the connection broke. It names the server and never the
// URL, which may carry a secret.
type reachError struct {
	method, server string
	err            error
}

func (e *reachError) Error() string {
	return fmt.Sprintf("%s to upstream %q: %v", e.method, e.server, e.err)
}

func (e *reachError) Unwrap() error { return e.err }

// post sends a notification or a response, bounded by notifyTimeout, and
// returns its status; the body is discarded. header adds headers.
func (b *httpBase) post(url string, msg *jsonrpc.Message, header func(http.Header)) (int, error) {
	ctx, cancel := context.WithTimeout(b.ctx, notifyTimeout)
	defer cancel()
	req, err := b.newRequest(ctx, http.MethodPost, url, msg.Encode())
	if err != nil {
		return 0, err
	}
	if header != nil {
		header(req.Header)
	}
	resp, err := b.do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if !isEventStream(resp) { // a stream might never end: just close it
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	}
	return resp.StatusCode, nil
}

// HTTPError is an HTTP answer to a request that carried no JSON-RPC
// response to it: an error status, or a body mcpx could not read as one.
// When the body was a JSON-RPC error, RPC holds it and the HTTPError
// unwraps to it: the upstream's own answer to the request.
type HTTPError struct {
	Server string
	Method string // the HTTP method
	Status int
	Body   string         // the start of a body that is not JSON-RPC
	RPC    *jsonrpc.Error // the JSON-RPC error the body carried
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("upstream %q answered %s with HTTP %d %s", e.Server, e.Method, e.Status, http.StatusText(e.Status))
	if e.Status/100 == 2 && e.RPC == nil {
		msg += " but no response to the request"
	}
	switch {
	case e.RPC != nil:
		msg += fmt.Sprintf(": error %d: %s", e.RPC.Code, e.RPC.Message)
	case e.Body != "":
		msg += ": " + e.Body
	}
	return msg
}

func (e *HTTPError) Unwrap() error {
	if e.RPC == nil {
		return nil
	}
	return e.RPC
}

// snippetLen bounds how much of an unreadable body an error quotes.
const snippetLen = 200

// errorBodyLimit bounds how much of an error status's body is read.
const errorBodyLimit = 64 << 10

// responseError reads an answer that is not a stream or a JSON result,
// bounded, into an *HTTPError.
func (b *httpBase) responseError(resp *http.Response) *HTTPError {
	e := &HTTPError{Server: b.server, Method: resp.Request.Method, Status: resp.StatusCode}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, min(int64(b.limit), errorBodyLimit)))
	if msg, err := jsonrpc.Decode(data); err == nil && msg.Error != nil && msg.IsResponse() {
		e.RPC = msg.Error
		return e
	}
	e.Body = snippet(data)
	return e
}

// snippet returns the start of a body as one printable line.
func snippet(data []byte) string {
	s := strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, string(bytes.ToValidUTF8(data, nil)))
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > snippetLen {
		s = s[:snippetLen] + "…"
	}
	return s
}

// isEventStream reports whether an answer is an SSE stream.
func isEventStream(resp *http.Response) bool {
	ct := resp.Header.Get("Content-Type")
	switch ct { // the usual answers, without parsing (which allocates)
	case "text/event-stream":
		return true
	case "application/json":
		return false
	}
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "text/event-stream"
}

// readJSON reads a JSON answer of at most limit bytes.
func (b *httpBase) readJSON(resp *http.Response) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(b.limit)+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer of upstream %q: %w", b.server, err)
	}
	if len(data) > b.limit {
		return nil, fmt.Errorf("upstream %q sent a response over the %d-byte message limit", b.server, b.limit)
	}
	return data, nil
}

// deliverJSON hands a JSON answer to r to deliver, and fails r if the
// body held no response to it.
func (b *httpBase) deliverJSON(r *Request, resp *http.Response, deliver func([]byte)) {
	data, err := b.readJSON(resp)
	if err != nil {
		b.conn.failRequest(r, err)
		return
	}
	if len(bytes.TrimSpace(data)) > 0 {
		deliver(data)
	}
	b.conn.failRequest(r, &HTTPError{Server: b.server, Method: resp.Request.Method, Status: resp.StatusCode, Body: snippet(data)})
}

// readEvents reads an event stream, handing each message event to
// deliver, until it ends or, when r is set, r is answered or forgotten
// (then it reports true). Events of other types are ignored.
func (b *httpBase) readEvents(rd *sse.Reader, r *Request, deliver func([]byte)) (bool, error) {
	for {
		ev, err := rd.Next()
		if err != nil {
			return false, err
		}
		if ev.Type == "message" {
			deliver(ev.Data)
		}
		if r != nil && !b.conn.waiting(r) {
			return true, nil
		}
	}
}

// drainAnswered reads what is left of a response stream once its request
// was answered, so that the connection goes back to the client's pool
// instead of being closed with it: a server ends the stream right after
// the response, and a closed connection makes the next request dial a new
// one (a TCP handshake per call). A server that keeps the stream open, or
// sends more than drainLimit, gets the stream closed after drainWait, by
// cancelling x, as before.
func drainAnswered(x *exchange, body io.Reader) {
	t := time.AfterFunc(drainWait, func() { x.cancel(errDrained) })
	defer t.Stop()
	_, _ = io.Copy(io.Discard, io.LimitReader(body, drainLimit))
}

const (
	drainWait  = 100 * time.Millisecond
	drainLimit = 64 << 10
)

// errDrained ends an answered stream the server kept open.
var errDrained = errors.New("answered stream not ended by the server")

// streamError describes why a stream read stopped, for a failed request.
func (b *httpBase) streamError(err error) error {
	if errors.Is(err, sse.ErrTooLarge) {
		return fmt.Errorf("upstream %q sent an event over the %d-byte message limit", b.server, b.limit)
	}
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("upstream %q closed the response stream before answering", b.server)
	}
	return fmt.Errorf("reading the response stream of upstream %q: %w", b.server, err)
}

// sleep waits d, or until ctx ends (then it reports false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// waiting reports whether r still waits for its response.
func (c *Conn) waiting(r *Request) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending[r.ID] == r
}

// failRequest ends r with err, if it still waits for its response.
func (c *Conn) failRequest(r *Request, err error) {
	c.mu.Lock()
	if c.pending[r.ID] != r {
		c.mu.Unlock()
		return
	}
	delete(c.pending, r.ID)
	c.mu.Unlock()
	r.err = err
	close(r.done)
}

// rawRequestMeta returns the _meta of a message's params, raw.
func rawRequestMeta(msg *jsonrpc.Message) json.RawMessage {
	obj, err := jsonrpc.ParseObject(msg.Params)
	if err != nil {
		return nil
	}
	meta, _ := obj.Get("_meta")
	return meta
}

// logCancelPost logs how a notifications/cancelled POST went, when it did
// not go well.
func logCancelPost(log *slog.Logger, id int64, status int, err error) {
	switch {
	case err != nil:
		log.Warn("could not tell the upstream of a cancellation", "id", id, "err", err)
	case status/100 != 2:
		log.Warn("upstream refused a cancellation", "id", id, "status", status)
	}
}
