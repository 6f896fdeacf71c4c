package hostjobs

import (
	"context"
	"encoding/json"
	"log/slog"

	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/outq"
	"mcpx/internal/relay"
)

// Host is a Link's side of the host: the call's request and its host's
// session, as the session (package hostserver) keeps them. Its methods
// are called by the link, on the call's goroutine or the relay's timer:
// what the link reads of the request and its session, and what only the
// session may do to them (answer the request, release it). The link makes
// the job itself (Link.Jobs).
type Host interface {
	// Entry is the call's registry entry (nil: none).
	Entry() *relay.Entry
	// Job is what the call is as a job, read as it becomes one (most
	// calls never do, and pay nothing for it): the request's context,
	// whose values the job keeps and not its end; what the job keeps of
	// the call; and the request's cancel, which ends the call.
	Job() (ctx context.Context, spec jobs.Spec, cancel context.CancelCauseFunc)
	// ReplyJob answers the host's request with job c.
	ReplyJob(c *jobs.Call)
	// ReplyToolError answers the host's request with a tool error.
	ReplyToolError(text string)
	// Release gives the request up to its session: its sink finished and
	// its handler counted gone, its goroutine the job's (the session's
	// own method, called once).
	Release()
	// Modern reports whether the host speaks 2026-07-28.
	Modern() bool
	// IsTask reports whether the call is a task's.
	IsTask() bool
	// Declares reports whether the request's capabilities cover method
	// with params.
	Declares(method string, params json.RawMessage) bool
	// RequestID is the request's JSON-RPC id, for the log.
	RequestID() string

	// Log is the server's log.
	Log() *slog.Logger
	// HostID is the host session's id.
	HostID() string
	// JobStream is the stream of the session that carries what mcpx
	// sends outside its requests, as the queue behind it, nil if none.
	JobStream() *outq.Queue
	// Reopens reports whether that stream may end and be opened again
	// (a legacy HTTP session's GET stream), rather than end with its
	// host (a stream connection).
	Reopens() bool
	// StreamNext is closed as a stream next becomes the session's:
	// taken before looking for one, it misses none.
	StreamNext() <-chan struct{}
	// Ended is closed as the session ends.
	Ended() <-chan struct{}
	// Questions are the requests mcpx has sent the host, awaiting its
	// answers.
	Questions() *jsonrpc.Pending
}

// LiveAsker is a host's Asker on its request's own stream: a Link puts a
// question there while the call is the request's, and waits on as a
// job's if the call becomes one meanwhile (askwait.go).
type LiveAsker interface {
	relay.Asker
	// Put registers a question under a new id of mcpx's and queues it on
	// the request's stream; the caller removes id from Questions once
	// done with it. The error says the stream has ended.
	Put(method string, params json.RawMessage) (jsonrpc.ID, <-chan *jsonrpc.Message, error)
	// Push queues line, a request of mcpx's or what withdraws one, on
	// the request's stream; an error if that stream has ended.
	Push(line []byte) error
}
