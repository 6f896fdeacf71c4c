package hosthttp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/outq"
	"mcpx/internal/sse"
)

// Stream is one request's response stream: the request's messages, in
// order, as a single JSON body or as SSE; or a legacy session's GET
// stream (standalone.go). It is what a session sees of the transport.
//
// It streams (SSE) from the start when the host asked for progress or, in
// 2026-07-28, for log messages, and otherwise as soon as a notification
// comes before the response; a response that comes alone is one JSON body.
// A host that accepts only JSON gets no notifications; one that accepts
// only SSE gets SSE.
//
// Messages are queued by the session's goroutines (a request's handler,
// an upstream's reader) in an outq.Queue, in order; the ServeHTTP
// goroutine alone writes them, in serve, until [Stream.Finish]. What
// cannot be written because the host has gone is dropped: a legacy host
// that disconnects has not cancelled, so its session may keep its call's
// result (hostserver makes the call a job for the host's principal,
// [Stream.HostContext]); a response nobody took is logged.
type Stream struct {
	q   *outq.Queue
	w   http.ResponseWriter
	rc  *http.ResponseController
	ctx context.Context // the HTTP request's: done once the host has gone
	acc Accept
	log *slog.Logger

	// For the log of a kept result.
	host, tool string
	id         jsonrpc.ID

	keepAlive time.Duration
	wantSSE   bool
	// modern: a 2026-07-28 request, whose error responses carry their
	// HTTP status (see ErrorStatus).
	modern  bool
	replied atomic.Bool // a response was pushed

	// Owned by the serve goroutine.
	streaming bool
	held      []byte // a response not written yet: alone, it is JSON
	gone      bool
	dropped   int
	// stopKeepAlive stops the keep-alive comments of a stream.
	stopKeepAlive func()
}

// keepAliveLine is queued to make serve write an SSE comment.
var keepAliveLine = []byte(":")

// NewStream returns the response stream of r on w, whose messages q
// queues, for a host that accepts acc. A [Server] makes the streams it
// serves; NewStream is for a session's tests.
func NewStream(q *outq.Queue, w http.ResponseWriter, r *http.Request, acc Accept) *Stream {
	return &Stream{q: q, w: w, rc: http.NewResponseController(w), ctx: r.Context(), acc: acc, log: slog.New(slog.DiscardHandler), id: jsonrpc.NullID}
}

func (h *Server) newStream(w http.ResponseWriter, r *http.Request, hs Session, msg *jsonrpc.Message, params reqParams, acc Accept) *Stream {
	s := &Stream{
		q: h.srv.NewQueue(), w: w, rc: http.NewResponseController(w), ctx: r.Context(), acc: acc, log: h.log,
		host: hs.ID(), id: msg.ID, keepAlive: h.opts.KeepAlive,
	}
	if msg.Method == mcp.MethodToolsCall {
		s.tool, _ = params.str("name")
	}
	_, progress := params.meta.Get(mcp.MetaProgressToken)
	_, logs := params.meta.Get(mcp.MetaLogLevel)
	s.wantSSE = acc.SSE && (progress || logs || !acc.JSON)
	return s
}

// PushWhile queues line while live (nil: always) reports true, checked
// so that nothing follows what was queued after live turned false.
func (s *Stream) PushWhile(live func() bool, line []byte) {
	_ = s.q.PushWhile(func() bool {
		if live != nil && !live() {
			return false
		}
		if IsResponse(line) {
			s.replied.Store(true)
		}
		return true
	}, line)
}

// PushKeyed queues line while live, as PushWhile, where a line of the
// same key not yet written may be replaced by it (progress).
func (s *Stream) PushKeyed(live func() bool, key string, line []byte) {
	_ = s.q.PushKeyed(live, key, line)
}

// Finish ends the stream once what is queued is written.
func (s *Stream) Finish() { s.q.Close() }

// finish is Finish, for the transport's own calls.
func (s *Stream) finish() { s.Finish() }

// Queue is the queue the stream writes from: a session may push on it
// (Push fails once the stream has finished) and wait for its end (Done).
func (s *Stream) Queue() *outq.Queue { return s.q }

// AcceptsSSE reports whether the host takes the stream as SSE, so that
// it can carry more than the response: requests of mcpx's, notifications.
func (s *Stream) AcceptsSSE() bool { return s.acc.SSE }

// HostContext is a legacy request's HTTP context, done once its host has
// gone (which, in those revisions, cancels nothing); nil for a
// 2026-07-28 request, whose host closing the stream cancels it.
func (s *Stream) HostContext() context.Context {
	if s.modern {
		return nil
	}
	return s.ctx
}

// answered reports whether the request's response has been pushed: after
// that, the host closing the stream cancels nothing.
func (s *Stream) answered() bool { return s.replied.Load() }

// serve writes the request's messages until finish, then ends the
// response.
func (s *Stream) serve() {
	if s.wantSSE {
		s.startSSE()
	}
	_ = s.q.Run(func(_ []byte, batch [][]byte) error {
		for _, line := range batch { // no partial: nothing writes without waiting
			s.write(line)
		}
		return nil // never stop: a response that cannot be written is logged
	})
	defer func() {
		if s.stopKeepAlive != nil {
			s.stopKeepAlive()
		}
	}()
	switch {
	case s.held != nil && s.ctx.Err() != nil:
		s.kept(s.held)
	case s.held != nil:
		status := http.StatusOK
		if s.modern {
			status = ErrorStatus(s.held)
		}
		s.w.Header().Set("Content-Type", "application/json")
		s.w.Header().Set("Content-Length", strconv.Itoa(len(s.held)))
		s.w.WriteHeader(status)
		if _, err := s.w.Write(s.held); err != nil {
			s.kept(s.held)
		}
	case !s.streaming && !s.gone:
		// No response: the host cancelled the request (or left). The
		// stream it opened ends empty.
		s.startSSE()
	}
	if s.dropped > 0 {
		s.log.Debug("dropped messages for a host that left", "host", s.host, "id", s.id.String(), "dropped", s.dropped)
	}
}

// write writes one queued message (or keep-alive).
func (s *Stream) write(line []byte) {
	if &line[0] == &keepAliveLine[0] {
		if s.streaming && !s.gone {
			if sse.WriteComment(s.w, "keep-alive") != nil || s.rc.Flush() != nil {
				s.gone = true
			}
		}
		return
	}
	resp := IsResponse(line)
	if !s.gone && s.ctx.Err() != nil {
		s.gone = true
	}
	if s.gone {
		if resp {
			s.kept(line)
		} else {
			s.dropped++
		}
		return
	}
	if !s.streaming {
		if resp && s.held == nil && s.acc.JSON {
			s.held = line // written as JSON at the end, unless more follows
			return
		}
		if !s.acc.SSE {
			s.dropped++ // a host that takes only JSON gets no notifications
			return
		}
		s.startSSE()
		if s.held != nil {
			held := s.held
			s.held = nil
			s.write(held)
		}
	}
	if sse.WriteEvent(s.w, "", "", line) != nil || s.rc.Flush() != nil {
		s.gone = true
		if resp {
			s.kept(line)
		}
	}
}

func (s *Stream) startSSE() {
	if s.streaming {
		return
	}
	s.streaming = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	if s.rc.Flush() != nil {
		s.gone = true
	}
	s.stopKeepAlive = s.runKeepAlive()
}

// runKeepAlive queues a keep-alive comment every KeepAlive until stopped.
func (s *Stream) runKeepAlive() (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(s.keepAlive)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				_ = s.q.PushWhile(nil, keepAliveLine)
			}
		}
	}()
	return func() { close(quit); <-done }
}

// kept logs a response its host did not stay for: its size, ids and
// shape, never its content (a tool's result may hold anything a user
// would not put in a log file), and the first text only at debug level.
func (s *Stream) kept(line []byte) {
	msg, err := jsonrpc.Decode(line)
	if err != nil {
		return
	}
	args := []any{"host", s.host, "id", s.id.String(), "tool", s.tool, "bytes", len(line)}
	if msg.Error != nil {
		args = append(args, "code", msg.Error.Code)
		s.log.Warn("kept the result of a call whose host had left", args...)
		return
	}
	var res struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(msg.Result, &res)
	args = append(args, "isError", res.IsError, "contentItems", len(res.Content))
	s.log.Warn("kept the result of a call whose host had left", args...)
	if s.log.Enabled(context.Background(), slog.LevelDebug) {
		for _, c := range res.Content {
			if c.Type == "text" {
				s.log.Debug("the kept result's first text", "host", s.host, "id", s.id.String(), "text", shorten(c.Text, 200))
				break
			}
		}
	}
}

// shorten cuts s to at most n bytes, at a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
