package hosthttp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/outq"
	"mcpx/internal/principal"
)

// Sessions are the host sessions a [Server] carries messages for
// (hostserver's): the transport knows how a message travels, they know
// what it means. A Sessions is safe for concurrent use.
type Sessions interface {
	// New starts a host session for who's requests: a legacy session
	// once its initialize succeeds, or (stateless) the session of one
	// 2026-07-28 request.
	New(who principal.Principal, stateless bool) Session
	// NewQueue returns the ordered queue a response stream writes from:
	// the sessions' kind, as for their other hosts.
	NewQueue() *outq.Queue
	// Knows reports whether the sessions serve method to 2026-07-28
	// hosts (else 404, -32601); Served whether one they know has
	// something to serve it now (not a surface method no upstream
	// serves: 404 too).
	Knows(method string) bool
	Served(method string) bool
	// ParamValues returns the x-mcp-header values tool's annotations read
	// from args; false when there is nothing to check (a tool not
	// listed, or with no valid annotations).
	ParamValues(ctx context.Context, tool string, args json.RawMessage) ([]ParamValue, bool)
	// MaxMessageBytes bounds the body of a POST.
	MaxMessageBytes() int
	// Stopping is the error of a request refused as mcpx stops.
	Stopping() *jsonrpc.Error
	// Refused writes the log line of a refused request: once per key
	// and window, so that a client cannot flood the log.
	Refused(ctx context.Context, level slog.Level, key, msg string, args ...any)
	// Close is called once by [Server.Close], after every session's
	// handlers have ended: nothing is asked of the sessions after it.
	Close()
}

// Session is one host session: a legacy session's, whose messages
// arrive as POSTs carrying its Mcp-Session-Id, or one 2026-07-28
// request's. Its methods may be called from any goroutine.
type Session interface {
	// ID names the session in logs and status (never its Mcp-Session-Id,
	// a secret of the host's).
	ID() string
	// Describe is what logs say of the session: its principal, its
	// revision and its client's name ("" while unknown).
	Describe() (principal, version, client string)
	// KeepSubject keeps what the session needs of the HTTP request that
	// carries its next message (a person's access token).
	KeepSubject(r *http.Request)
	// Initialize answers initialize at once, with the line it returns.
	Initialize(msg *jsonrpc.Message) (reply []byte)
	// Request serves a request: its messages go to out, and it calls
	// out.Finish after the last of them, on any goroutine, now or later.
	Request(msg *jsonrpc.Message, out *Stream)
	// Notify takes a notification of the host's; Answer its response to
	// a request the session put to it.
	Notify(msg *jsonrpc.Message)
	Answer(msg *jsonrpc.Message)
	// Watch makes out the stream that carries what the session tells its
	// host outside any request (a legacy session's GET stream); nil: it
	// has none from now on.
	Watch(out *Stream)
	// CancelRequest cancels request id: its 2026-07-28 host closed the
	// response stream before the response.
	CancelRequest(id jsonrpc.ID)
	// End refuses the session's new requests and cancels those in
	// flight, for why; it returns how many were cancelled and the cause
	// they end with.
	End(why Ending) (cancelled int, cause error)
	// Close refuses new requests and returns once the session's handlers
	// have ended (after End: once the cancelled requests have).
	Close()
	// Leave gives up, after Close, what the session asked for beyond its
	// requests (its log level, its subscriptions).
	Leave()
}

// Ending is why the transport ends a session.
type Ending int

const (
	// EndStopping: the face is closing (mcpx stops).
	EndStopping Ending = iota
	// EndIdle: the session was idle too long, or made room for a new one.
	EndIdle
	// EndDeleted: the host ended it (DELETE).
	EndDeleted
)

// ParamValue is one Mcp-Param-* header a 2026-07-28 tools/call must
// carry, as its tool's x-mcp-header annotations read its arguments.
type ParamValue struct {
	Header string // Mcp-Param-{Name}
	Value  string
	// Set: the arguments give a value (not absent, not null, not an
	// object or array).
	Set bool
}
