package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"mcpx/internal/mcp"
)

// Event kinds, the values of [Event.Event].
const (
	EventRequest    = "request"            // a request arrived
	EventCancelled  = "cancelled"          // a notifications/cancelled arrived; over HTTP also a 2026 stream closed early, or a DELETE
	EventFinished   = "finished"           // a request ended; see Outcome
	EventInitialize = mcp.MethodInitialize // initialize was answered
	EventProgress   = "progress"           // a progress notification was sent (with Options.RecordProgress); see Progress, Message

	// Over HTTP only (see [ServeHTTP]).
	EventRejected      = "http-rejected"                    // a POST, GET or DELETE refused with an HTTP error; see Status, Code, Reason
	EventSessionStart  = "session-start"                    // initialize minted a legacy session
	EventSessionEnd    = "session-end"                      // a legacy session ended; Reason says why (DELETE, evicted, shutdown)
	EventResumed       = "resumed"                          // a GET with Last-Event-ID resumed a request's stream
	EventStreamClosed  = "sse-closed"                       // -sse-close-after closed a request's stream before its end
	EventGetStream     = "get-stream"                       // a GET opened the session's standalone stream
	EventPingClient    = "ping-client"                      // the server sent a ping request to the client (-ping-client)
	EventPingAnswered  = "ping-answered"                    // the client answered that ping; Outcome is result, error or timeout
	EventCancelledHTTP = "cancelled-notification-over-http" // a notifications/cancelled POST outside a legacy session
)

// Outcomes of a finished request, the values of [Event.Outcome].
const (
	OutcomeResult    = "result"    // a result was sent
	OutcomeError     = "error"     // a JSON-RPC error was sent
	OutcomeCancelled = "cancelled" // cancelled by the client: nothing was sent
	OutcomeShutdown  = "shutdown"  // Serve was stopping: nothing was sent
	OutcomeIgnored   = "ignored"   // server/discover with IgnoreDiscover: nothing was sent
	OutcomeExit      = "exit"      // the crash tool is about to call Exit
)

// Event is one thing the server saw or did, as written to [Options.Record]
// (one JSON object a line), passed to [Options.OnEvent] and, for
// cancellations, returned by the cancellations tool. Raw fields hold the
// peer's JSON.
type Event struct {
	Event string `json:"event"`
	// ID is the request's id (request, finished, initialize).
	ID json.RawMessage `json:"id,omitempty"`
	// RequestID is the requestId of a cancellation, as sent; for a ping
	// the server sent the client, the request it came before.
	RequestID json.RawMessage `json:"requestId,omitempty"`
	// Reason is the reason of a cancellation (over HTTP, also of a
	// rejection or of a session's end).
	Reason string `json:"reason,omitempty"`
	// Method and Tool name the request (Tool for tools/call); for a
	// cancellation, the request it matched.
	Method string `json:"method,omitempty"`
	Tool   string `json:"tool,omitempty"`
	// ProgressToken and Meta are the request's params._meta.progressToken
	// and params._meta.
	ProgressToken json.RawMessage `json:"progressToken,omitempty"`
	Meta          json.RawMessage `json:"meta,omitempty"`
	// Known tells whether a cancellation matched a running request; it is
	// set on every cancellation.
	Known *bool `json:"known,omitempty"`
	// ElapsedMs is the time since the request started, for a known
	// cancellation and for finished.
	ElapsedMs *int64 `json:"elapsedMs,omitempty"`
	// Progress and Message are a sent progress notification's value and
	// message (EventProgress).
	Progress *float64 `json:"progress,omitempty"`
	Message  string   `json:"message,omitempty"`
	// Outcome says how a finished request ended.
	Outcome string `json:"outcome,omitempty"`
	// Requested and ProtocolVersion are initialize's asked and agreed revisions.
	Requested       string `json:"requested,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Over HTTP: Session is the legacy session (Mcp-Session-Id) the event
	// belongs to; Headers are the request headers that matter
	// (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*), base64
	// sentinels decoded; Status and Code are the HTTP status and JSON-RPC
	// error code of a rejection; LastEventID is a resumption's Last-Event-ID.
	Session     string            `json:"session,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	Status      int               `json:"status,omitempty"`
	Code        int64             `json:"code,omitempty"`
	LastEventID string            `json:"lastEventId,omitempty"`
	// At is when the event happened, RFC 3339 with nanoseconds, UTC.
	At string `json:"at"`
}

// recorder keeps the cancellations and writes every event to the Record
// file and OnEvent. It is safe for concurrent use.
type recorder struct {
	mu            sync.Mutex
	file          *os.File    // nil without Options.Record
	onEvent       func(Event) // may be nil
	cancellations []Event     // guarded by mu
	line          []byte      // the line being written; guarded by mu
}

func openRecorder(c *config) (*recorder, error) {
	r := &recorder{onEvent: c.OnEvent}
	if c.Record != "" {
		f, err := os.OpenFile(c.Record, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("opening record file: %w", err)
		}
		r.file = f
	}
	return r, nil
}

func (r *recorder) add(e Event) {
	e.At = time.Now().UTC().Format(time.RFC3339Nano)
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Event == EventCancelled {
		r.cancellations = append(r.cancellations, e)
	}
	if r.file != nil {
		r.line = append(appendEvent(r.line[:0], &e), '\n')
		r.file.Write(r.line) // one write a line; a failure loses only the record
		if cap(r.line) > 64<<10 {
			r.line = nil // do not pin a large event's buffer
		}
	}
	if r.onEvent != nil {
		r.onEvent(e)
	}
}

// cancelled returns the cancellations recorded so far, never nil.
func (r *recorder) cancelled() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event{}, r.cancellations...)
}

func (r *recorder) close() {
	if r.file != nil {
		r.file.Close()
	}
}

// wireLog appends every line read and written to a file. A nil *wireLog
// logs nothing. It is safe for concurrent use.
type wireLog struct {
	mu  sync.Mutex
	f   *os.File
	buf []byte // guarded by mu
}

func openWireLog(path string) (*wireLog, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening wire log: %w", err)
	}
	return &wireLog{f: f}, nil
}

// line logs one line (without its newline) under prefix.
func (l *wireLog) line(prefix string, line []byte) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(append(append(l.buf[:0], prefix...), line...), '\n')
	l.f.Write(l.buf)
}

func (l *wireLog) close() {
	if l != nil {
		l.f.Close()
	}
}

// loggedWriter logs each line before writing it, so the log holds a line
// before the peer can see it. jsonrpc.Writer writes whole lines.
type loggedWriter struct {
	w   io.Writer
	log *wireLog
}

func (w loggedWriter) Write(p []byte) (int, error) {
	for line := range bytes.Lines(p) {
		w.log.line("> ", bytes.TrimSuffix(line, []byte("\n")))
	}
	return w.w.Write(p)
}

// marshal encodes v without HTML escaping, so raw members keep their text.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("demo: marshaling %T: %v", v, err))
	}
	return slices.Clip(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
