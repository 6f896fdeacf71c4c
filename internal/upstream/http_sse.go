package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/sse"
)

// sseTransport speaks the HTTP+SSE transport of 2024-11-05: a GET opens an
// event stream whose first event, endpoint, names the URI to POST every
// message to; everything the server sends comes as message events on that
// one stream. The stream is the session: when it ends, the session has.
type sseTransport struct {
	*httpBase
	endpoint string // set before the first message
}

// errStreamEnded fails the calls of an HTTP+SSE session whose stream ended.
var errStreamEnded = errors.New("closed its event stream")

// open issues the GET and waits, as long as ctx lives, for the endpoint
// event; the stream is then read in the background until it ends.
func (t *sseTransport) open(ctx context.Context) error {
	ready := make(chan error, 1)
	if !t.goFunc(func() { t.run(ready) }) {
		return errTransportClosed
	}
	select {
	case err := <-ready:
		return err
	case <-ctx.Done():
		return fmt.Errorf("waiting for the endpoint event of %q: %w", t.server, context.Cause(ctx))
	}
}

// run reads the stream: first the endpoint event (reported on ready), then
// message events, until the stream or the transport ends.
func (t *sseTransport) run(ready chan<- error) {
	report := func(err error) {
		select {
		case ready <- err:
		default:
		}
	}
	req, err := t.newRequest(t.ctx, http.MethodGet, t.url, nil)
	if err != nil {
		report(err)
		return
	}
	resp, err := t.do(req)
	if err != nil {
		report(err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !isEventStream(resp) {
		report(t.responseError(resp))
		return
	}
	rd := sse.NewReader(resp.Body, t.limit)
	for t.endpoint == "" {
		ev, err := rd.Next()
		if err != nil {
			report(fmt.Errorf("upstream %q sent no endpoint event: %w", t.server, t.streamError(err)))
			return
		}
		if ev.Type != "endpoint" {
			continue
		}
		endpoint, err := t.resolve(string(ev.Data))
		if err != nil {
			report(err)
			return
		}
		t.endpoint = endpoint
	}
	report(nil)
	_, err = t.readEvents(rd, nil, t.conn.deliver)
	if t.ctx.Err() != nil {
		return
	}
	if errors.Is(err, sse.ErrTooLarge) {
		t.log.Warn("upstream sent an event over the message limit", "limit", t.limit)
	}
	t.expire(fmt.Errorf("upstream %q %w", t.server, errStreamEnded), func() { t.stop(0) })
}

// resolve returns the endpoint event's URI, resolved against the stream's
// URL; it must have the same origin.
func (t *sseTransport) resolve(data string) (string, error) {
	base, err := url.Parse(t.url)
	if err != nil {
		return "", err
	}
	ref, err := url.Parse(strings.TrimSpace(data))
	if err != nil {
		return "", fmt.Errorf("upstream %q sent an endpoint that is not a URI", t.server)
	}
	u := base.ResolveReference(ref)
	if !sameOrigin(u, base) {
		return "", fmt.Errorf("upstream %q named a message endpoint on another origin", t.server)
	}
	return u.String(), nil
}

func (t *sseTransport) send(r *Request, msg *jsonrpc.Message) error {
	if r != nil {
		return t.start(r, msg, t.request)
	}
	status, err := t.post(t.endpoint, msg, nil)
	if err == nil && status/100 != 2 {
		if msg.Method == mcp.MethodInitialized {
			return fmt.Errorf("upstream %q answered notifications/initialized with HTTP %d %s", t.server, status, http.StatusText(status))
		}
		t.log.Warn("upstream refused a message", "method", msg.Method, "status", status)
	}
	return err
}

// request posts a request, then holds its slot until the answer comes on
// the stream or the request is given up.
func (t *sseTransport) request(x *exchange) {
	r := x.r
	if !t.acquire(x.ctx) {
		return
	}
	defer t.release()
	req, err := t.newRequest(x.ctx, http.MethodPost, t.endpoint, x.msg.Encode())
	if err != nil {
		t.conn.failRequest(r, err)
		return
	}
	resp := t.postExchange(x, req)
	if resp == nil {
		return
	}
	if resp.StatusCode/100 != 2 {
		err := t.responseError(resp)
		resp.Body.Close()
		t.conn.failRequest(r, err)
		return
	}
	resp.Body.Close()
	select {
	case <-r.done:
	case <-x.ctx.Done():
	}
}

func (t *sseTransport) cancel(r *Request, reason string) bool {
	x := t.take(r)
	told := false
	if x == nil || x.sent.Load() {
		params := jsonrpc.MustMarshal(mcp.CancelledParams{RequestID: jsonrpc.NewIntID(r.ID).Raw(), Reason: reason})
		told = t.goFunc(func() { // as legacyTransport.cancel
			status, err := t.post(t.endpoint, jsonrpc.NewNotification(mcp.MethodCancelled, params), nil)
			logCancelPost(t.log, r.ID, status, err)
		})
	}
	if x != nil {
		x.cancel(errAbandoned)
	}
	return told
}

// stop closes the stream, which ends the session.
func (t *sseTransport) stop(time.Duration) { t.shutdown(ErrStopped, nil) }

func (t *sseTransport) pid() int { return 0 }

func (t *sseTransport) stderrTail() string { return "" }
