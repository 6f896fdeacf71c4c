package hostserver

import (
	"context"
	"encoding/json"
	"log/slog"

	"mcpx/internal/hostjobs"
	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/outq"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
)

// jobHost is a call that may become a job (jobcall.go): its
// hostjobs.Link, and the link's Host, the request and its session, in one
// allocation (request.job).
type jobHost struct {
	hostjobs.Link
	req *request // its session is req.session(): no field of its own (its size class)
	cd  candidate
	// who is the host's principal with its client's name, read from the
	// request as the link is made: the relay edits the request's _meta
	// while the call runs, and the link becomes a job on its timer.
	who principal.Principal
}

// jobLine is Link.JobLine, false for a request with no link (nil).
func (h *jobHost) jobLine(line []byte) bool {
	return h != nil && h.JobLine(line)
}

func (h *jobHost) Entry() *relay.Entry { return h.req.entry }

func (h *jobHost) Job() (context.Context, jobs.Spec, context.CancelCauseFunc) {
	return h.req.ctx, h.spec(), h.req.cancel
}

// spec is what the job keeps of its call, read as it becomes one: most
// calls never do.
func (h *jobHost) spec() jobs.Spec {
	hs, cd := h.req.session(), h.cd
	sp := jobs.Spec{Principal: hs.jobPrincipal(), Server: cd.server, Tool: cd.tool, Key: cd.key, Who: h.who}
	if cd.script {
		// Never run again, not idempotent: its params say only which
		// filter it ran under (policyfilter.go).
		sp.Params = hs.filterOf(h.who).scriptJobParams()
		return sp
	}
	sp.Params = cd.params
	if sp.Key == "" {
		var p struct {
			Args json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(cd.params, &p)
		sp.Key = jobs.Key(cd.server, cd.tool, p.Args)
	}
	sp.Idempotent = hs.idempotent(context.WithoutCancel(h.req.ctx), cd.server, cd.tool)
	return sp
}

func (h *jobHost) ReplyJob(c *jobs.Call) {
	h.req.session().replyRunningID(h.req, c, c.ID(), h.cd.timer)
}
func (h *jobHost) ReplyToolError(text string)  { h.req.session().replyToolError(h.req, text) }
func (h *jobHost) Release()                    { h.req.session().release(h.req) }
func (h *jobHost) Modern() bool                { return h.req.modern }
func (h *jobHost) IsTask() bool                { return h.req.task != nil }
func (h *jobHost) RequestID() string           { return h.req.msg.ID.String() }
func (h *jobHost) Log() *slog.Logger           { return h.req.session().srv.log }
func (h *jobHost) HostID() string              { return h.req.session().id }
func (h *jobHost) JobStream() *outq.Queue      { return h.req.session().jobStream() }
func (h *jobHost) Reopens() bool               { return h.req.session().out == nil }
func (h *jobHost) StreamNext() <-chan struct{} { return h.req.session().streamNext() }
func (h *jobHost) Ended() <-chan struct{}      { return h.req.session().ended() }
func (h *jobHost) Questions() *jsonrpc.Pending { return &h.req.session().questions }

func (h *jobHost) Declares(method string, params json.RawMessage) bool {
	return declares(h.req.caps, method, params)
}

// jobStream returns the stream of hs that carries what mcpx sends it
// outside its requests (streamOf), as the queue behind it, nil if none.
func (hs *hostSession) jobStream() *outq.Queue {
	if s := hs.srv.streamOf(hs); s != nil {
		return s.queue()
	}
	return nil
}

// ended returns what is closed as the session ends (setClosing).
func (hs *hostSession) ended() <-chan struct{} {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.gone == nil {
		hs.gone = make(chan struct{})
		if hs.closing {
			close(hs.gone)
		}
	}
	return hs.gone
}

// streamNext returns what is closed as a stream next becomes the
// session's (watchLegacy): taken before looking for one, it misses none.
func (hs *hostSession) streamNext() <-chan struct{} {
	hs.streamMu.Lock()
	defer hs.streamMu.Unlock()
	if hs.nextStream == nil {
		hs.nextStream = make(chan struct{})
	}
	return hs.nextStream
}

// streamOpened tells those waiting for a stream of the session's that one
// is.
func (hs *hostSession) streamOpened() {
	hs.streamMu.Lock()
	defer hs.streamMu.Unlock()
	if hs.nextStream != nil {
		close(hs.nextStream)
		hs.nextStream = nil
	}
}
