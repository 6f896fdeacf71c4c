package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/sse"
)

// legacyTransport speaks Streamable HTTP as revisions 2025-03-26 to
// 2025-11-25 define it: every message a POST to the one endpoint, a session
// the server may open at initialize (its id echoed on every later request,
// ended with DELETE), the negotiated revision in MCP-Protocol-Version from
// 2025-06-18 on, answers as JSON or as an SSE stream that the server may
// close early and the client resumes with GET and Last-Event-ID, and an
// optional standalone GET stream for messages the server starts itself.
type legacyTransport struct {
	*httpBase

	smu       sync.Mutex
	sessionID string
	version   string // negotiated, once initialize is answered
	expired   bool

	listening atomic.Bool // the standalone GET stream is kept open
}

// ErrSessionExpired fails the calls of an upstream session the server
// ended (it answered 404 Not Found for the session): the next use of the
// server starts a new session.
var ErrSessionExpired = errors.New("upstream session expired")

// errNoResume is a server that will not resume a stream (405 to the GET).
var errNoResume = errors.New("the server offers no stream at its endpoint (405 Method Not Allowed)")

// Resumption of a stream the server closed before the answer.
const (
	defaultRetry      = time.Second // when the server set no retry
	maxResumeFailures = 3           // consecutive failed reconnections before giving up
)

func (t *legacyTransport) send(r *Request, msg *jsonrpc.Message) error {
	if r != nil {
		return t.start(r, msg, t.request)
	}
	status, err := t.notice(msg)
	switch {
	case err != nil:
		return err
	case status/100 != 2 && msg.Method == mcp.MethodInitialized:
		return fmt.Errorf("upstream %q answered notifications/initialized with HTTP %d %s", t.server, status, http.StatusText(status))
	case status/100 != 2:
		t.log.Warn("upstream refused a message", "method", msg.Method, "status", status)
	case msg.Method == mcp.MethodInitialized:
		// The session is ready once its standalone stream is open (or
		// refused): a server may send what a call makes it say there
		// (requests, log messages), and one that finds no stream drops it.
		opened := make(chan struct{})
		if t.goFunc(func() { t.listen(opened) }) {
			wait := time.NewTimer(listenOpenWait)
			defer wait.Stop()
			select {
			case <-opened:
			case <-wait.C:
				t.log.Debug("the standalone event stream did not open in time; going on without waiting", "waited", listenOpenWait)
			case <-t.ctx.Done():
			}
		}
	}
	return nil
}

// listenOpenWait bounds how long the handshake waits for the standalone
// stream to open.
const listenOpenWait = 3 * time.Second

// notice posts a notification or a response and returns the HTTP status.
func (t *legacyTransport) notice(msg *jsonrpc.Message) (int, error) {
	var hadSession bool
	status, err := t.post(t.url, msg, func(h http.Header) { hadSession = t.sessionHeaders(h) })
	if err == nil && status == http.StatusNotFound && hadSession {
		return status, t.sessionGone()
	}
	return status, err
}

// sessionHeaders sets the session id and the negotiated revision, as far
// as they are known, and reports whether a session id was sent.
func (t *legacyTransport) sessionHeaders(h http.Header) bool {
	t.smu.Lock()
	sid, version := t.sessionID, t.version
	t.smu.Unlock()
	if sid != "" {
		h.Set(headerSessionID, sid)
	}
	if version >= mcp.Version20250618 {
		h.Set(headerProtocolVersion, version)
	}
	return sid != ""
}

// sessionGone fails the session the server no longer knows and tears the
// transport down; it returns the session's error.
func (t *legacyTransport) sessionGone() error {
	t.smu.Lock()
	t.expired = true
	t.smu.Unlock()
	err := fmt.Errorf("upstream %q: %w (the server answered 404 Not Found for its session)", t.server, ErrSessionExpired)
	t.expire(err, func() { t.stop(0) })
	return t.conn.Err()
}

// request runs one request's exchange: the POST, then its answer, JSON or
// a stream followed across reconnections until the response arrives.
func (t *legacyTransport) request(x *exchange) {
	r := x.r
	if !t.acquire(x.ctx) {
		return
	}
	defer t.release()
	init := r.Method == mcp.MethodInitialize
	req, err := t.newRequest(x.ctx, http.MethodPost, t.url, x.msg.Encode())
	if err != nil {
		t.conn.failRequest(r, err)
		return
	}
	hadSession := false
	if !init {
		hadSession = t.sessionHeaders(req.Header)
	}
	// What arrives on this request's stream belongs to it: a server
	// request there is attributed to this call, its log messages to its
	// host (messages.go).
	deliver := t.conn.deliverFor(r)
	if init {
		deliver = func(data []byte) { t.noteVersion(data, r.ID); t.conn.deliver(data) }
	}
	resp := t.postExchange(x, req)
	if resp == nil {
		return
	}
	defer resp.Body.Close()
	if init && resp.StatusCode/100 == 2 {
		t.noteSession(resp)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && hadSession:
		t.sessionGone()
	case resp.StatusCode/100 != 2:
		t.conn.failRequest(r, t.responseError(resp))
	case isEventStream(resp):
		t.follow(x, resp, deliver)
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		// No answer in the body: it can only come on the standalone
		// stream, while mcpx keeps one open.
		if !t.listening.Load() {
			t.conn.failRequest(r, &HTTPError{Server: t.server, Method: http.MethodPost, Status: resp.StatusCode,
				Body: "and no stream to send it on"})
		}
	default:
		t.deliverJSON(r, resp, deliver)
	}
}

// noteSession keeps the session id of an initialize answer.
func (t *legacyTransport) noteSession(resp *http.Response) {
	sid := resp.Header.Get(headerSessionID)
	if sid == "" {
		return
	}
	for i := 0; i < len(sid); i++ {
		if sid[i] < 0x21 || sid[i] > 0x7e {
			t.log.Warn("ignoring a session id with characters other than visible ASCII")
			return
		}
	}
	t.smu.Lock()
	t.sessionID = sid
	t.smu.Unlock()
}

// noteVersion keeps the revision of initialize's result, before the
// handshake sees it, so that every later request carries it.
func (t *legacyTransport) noteVersion(data []byte, id int64) {
	msg, err := jsonrpc.Decode(data)
	if err != nil || !msg.IsResponse() || msg.Error != nil {
		return
	}
	if n, ok := msg.ID.Int(); !ok || n != id {
		return
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(msg.Result, &res) == nil && mcp.IsLegacy(res.ProtocolVersion) {
		t.smu.Lock()
		t.version = res.ProtocolVersion
		t.smu.Unlock()
	}
}

// follow reads a request's stream until its response. A stream that ends
// first is neither a result nor a failure: after the server's retry delay
// it is resumed with GET and the last event id, as often as the server
// closes it, until the response arrives or the request is given up.
func (t *legacyTransport) follow(x *exchange, resp *http.Response, deliver func([]byte)) {
	r := x.r
	lastID, retry := "", defaultRetry
	failures := 0
	for {
		rd := sse.NewReader(resp.Body, t.limit)
		answered, err := t.readEvents(rd, r, deliver)
		if answered {
			drainAnswered(x, resp.Body)
		}
		resp.Body.Close()
		if id := rd.LastEventID(); id != "" {
			lastID = id
		}
		if d, ok := rd.Retry(); ok {
			retry = d
		}
		if answered || x.ctx.Err() != nil {
			return
		}
		if errors.Is(err, sse.ErrTooLarge) {
			t.conn.failRequest(r, t.streamError(err))
			return
		}
		if lastID == "" {
			t.conn.failRequest(r, fmt.Errorf("upstream %q closed the stream of request %d before answering it, with no event id to resume from", t.server, r.ID))
			return
		}
		for {
			if !sleep(x.ctx, retry) {
				return
			}
			resp, err = t.openStream(x.ctx, lastID)
			if err == nil {
				break
			}
			if x.ctx.Err() != nil || errors.Is(err, ErrSessionExpired) {
				return
			}
			failures++
			if failures >= maxResumeFailures || errors.Is(err, errNoResume) {
				t.conn.failRequest(r, fmt.Errorf("resuming the stream of request %d: %w", r.ID, err))
				return
			}
			t.log.Debug("resuming a stream failed; retrying", "id", r.ID, "err", err)
		}
		failures = 0
	}
}

// openStream opens a GET stream: a resumption after lastID, or (lastID "")
// the standalone stream.
func (t *legacyTransport) openStream(ctx context.Context, lastID string) (*http.Response, error) {
	req, err := t.newRequest(ctx, http.MethodGet, t.url, nil)
	if err != nil {
		return nil, err
	}
	hadSession := t.sessionHeaders(req.Header)
	if lastID != "" {
		req.Header.Set(headerLastEventID, lastID)
	}
	resp, err := t.do(req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusOK && isEventStream(resp):
		return resp, nil
	case resp.StatusCode == http.StatusNotFound && hadSession:
		resp.Body.Close()
		return nil, t.sessionGone()
	case resp.StatusCode == http.StatusMethodNotAllowed:
		resp.Body.Close()
		return nil, errNoResume
	}
	defer resp.Body.Close()
	return nil, t.responseError(resp)
}

// maxListenFailures bounds consecutive failed or empty openings of the
// standalone stream.
const maxListenFailures = 3

// listen keeps the standalone GET stream open, for the requests and
// notifications the server sends unprompted, until the transport stops.
// A server without one answers 405; one that keeps failing is given up.
// opened is closed once the first opening has been answered (or failed).
func (t *legacyTransport) listen(opened chan struct{}) {
	defer t.listening.Store(false)
	first := sync.OnceFunc(func() { close(opened) })
	defer first()
	lastID, retry := "", defaultRetry
	for failures := 0; failures < maxListenFailures; {
		resp, err := t.openStream(t.ctx, lastID)
		if err == nil {
			t.listening.Store(true)
		}
		first()
		switch {
		case t.ctx.Err() != nil || errors.Is(err, ErrSessionExpired):
			return
		case errors.Is(err, errNoResume):
			t.log.Debug("upstream has no standalone event stream")
			return
		case err != nil:
			failures++
			t.log.Debug("opening the standalone event stream failed", "err", err)
		default:
			rd := sse.NewReader(resp.Body, t.limit)
			n, err := t.readAll(rd)
			resp.Body.Close()
			gotID := rd.LastEventID() != "" && rd.LastEventID() != lastID
			if gotID {
				lastID = rd.LastEventID()
			}
			if d, ok := rd.Retry(); ok {
				retry = d
			}
			if t.ctx.Err() != nil {
				return
			}
			if errors.Is(err, sse.ErrTooLarge) {
				t.log.Warn("upstream sent an event over the message limit on its standalone stream", "limit", t.limit)
			}
			if n > 0 || gotID {
				failures = 0
			} else {
				failures++
			}
		}
		if !sleep(t.ctx, retry) {
			return
		}
	}
	t.log.Info("gave up on the upstream's standalone event stream")
}

// readAll reads a stream to its end and returns how many messages it held.
func (t *legacyTransport) readAll(rd *sse.Reader) (int, error) {
	n := 0
	for {
		ev, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return n, err
		}
		if ev.Type == "message" {
			n++
			t.conn.deliver(ev.Data)
		}
	}
}

// cancel posts notifications/cancelled on a goroutine of the transport:
// the host's answer never waits for an upstream that is slow to take it
// (or gone). It reports whether the post is under way.
func (t *legacyTransport) cancel(r *Request, reason string) bool {
	x := t.take(r)
	told := false
	if x == nil || x.sent.Load() {
		params := jsonrpc.MustMarshal(mcp.CancelledParams{RequestID: jsonrpc.NewIntID(r.ID).Raw(), Reason: reason})
		told = t.goFunc(func() {
			status, err := t.notice(jsonrpc.NewNotification(mcp.MethodCancelled, params))
			logCancelPost(t.log, r.ID, status, err)
		})
	}
	if x != nil {
		x.cancel(errAbandoned) // and read no more of its stream
	}
	return told
}

// stop ends the session: every stream is closed, then the session is
// ended with DELETE (a 405 means the server does not allow it: fine).
func (t *legacyTransport) stop(grace time.Duration) {
	t.shutdown(ErrStopped, func() { t.deleteSession(grace) })
}

func (t *legacyTransport) deleteSession(grace time.Duration) {
	t.smu.Lock()
	sid, expired := t.sessionID, t.expired
	t.smu.Unlock()
	if sid == "" || expired {
		return
	}
	if grace <= 0 || grace > notifyTimeout {
		grace = notifyTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	req, err := t.newRequest(ctx, http.MethodDelete, t.url, nil)
	if err != nil {
		return
	}
	t.sessionHeaders(req.Header)
	resp, err := t.do(req)
	if err != nil {
		t.log.Debug("ending the upstream session failed", "err", err)
		return
	}
	resp.Body.Close()
	t.log.Debug("ended the upstream session", "status", resp.StatusCode)
}

func (t *legacyTransport) pid() int { return 0 }

func (t *legacyTransport) stderrTail() string { return "" }
