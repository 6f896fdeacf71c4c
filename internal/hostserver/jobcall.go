package hostserver

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"mcpx/internal/hostprofile"
	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// A call that would outlive its host's hard timer becomes a job this long
// before the timer fires: a fifth of the timer, at most 5 s. The host must
// have the answer in hand before its timer fires, across its own
// scheduling and the transport.
const maxJobMargin = 5 * time.Second

// jobMargin returns how long before a timer of t the call becomes a job.
func jobMargin(t time.Duration) time.Duration { return min(t/5, maxJobMargin) }

// profile returns the timer profile of req's host, named by the
// clientInfo of its initialize or, for a 2026-07-28 request, of its own
// _meta: the zero Profile (no timer) when the server was given no way to
// find one.
func (hs *hostSession) profile(req *request) hostprofile.Profile {
	if hs.srv.opts.HostProfile == nil {
		return hostprofile.Profile{}
	}
	hs.mu.Lock()
	name := hs.clientName
	hs.mu.Unlock()
	if req.meta != nil {
		if raw, ok := req.meta.Get(mcp.MetaClientInfo); ok {
			var info mcp.Implementation
			if json.Unmarshal(raw, &info) == nil && info.Name != "" {
				name = info.Name
			}
		}
	}
	return hs.srv.opts.HostProfile(name)
}

// hardTimer returns how long the host waits for this call whatever
// happens, 0 if it has no such timer: a timer progress does not reset, or
// one it would but the host gave no progress token to carry progress.
func (hs *hostSession) hardTimer(req *request, hasToken bool) time.Duration {
	p := hs.profile(req)
	if p.Timeout <= 0 || p.ResetOnProgress && hasToken {
		return 0
	}
	return p.Timeout
}

// answerWindow is how long mcpx may keep the host waiting on a job: up to
// the margin before its hard timer, else capped at maxJobWait.
func (hs *hostSession) answerWindow(req *request, hasToken bool) time.Duration {
	if t := hs.hardTimer(req, hasToken); t > 0 {
		return t - jobMargin(t)
	}
	return maxJobWait
}

// maxJobWait is the longest mcpx_job waits for a host with no hard timer.
const maxJobWait = 60 * time.Second

// relayAsJob relays a call that may become a job: a hard-timer host's, a
// background one, or a retry of a running job's call (which attaches to
// it). The call runs on the job manager's goroutine under a context the
// host's request does not end; the host's cancel reaches it until it is a
// job. Its questions to the host (elicitation, sampling) are refused and
// its log messages are not routed to this request: a job outlives it.
func (hs *hostSession) relayAsJob(ctx context.Context, req *request, call relay.Call, timer time.Duration, background bool, key string) {
	m := hs.srv.opts.Jobs
	args, _ := call.Params.Get("arguments")
	switch {
	case req.task != nil:
		// A task is its own: no other call attaches to it, nor it to one.
		key = "task:" + jobs.NewID()
	case key == "":
		key = jobs.Key(call.Server, call.Tool, args)
	}
	if c := m.Attach(hs.jobPrincipal(), key); c != nil {
		hs.awaitJob(ctx, req, c, timer, background)
		return
	}
	spec := jobs.Spec{
		Principal: hs.jobPrincipal(), Server: call.Server, Tool: call.Tool, Key: key,
		Params: call.Params.Bytes(), Idempotent: hs.idempotent(ctx, call.Server, call.Tool),
	}
	hostProgress := call.Progress
	if call.HostToken == nil {
		call.HostToken = json.RawMessage(`"mcpx-job"`)
	}
	var fwd struct {
		sync.Mutex
		off bool // the host's request is answered: no more progress to it
	}
	var jc *jobs.Call
	call.Progress = func(p json.RawMessage) {
		var pr jobs.Progress
		if json.Unmarshal(p, &pr) == nil {
			jc.SetProgress(pr)
		}
		if hostProgress == nil {
			return
		}
		fwd.Lock()
		defer fwd.Unlock()
		if !fwd.off {
			hostProgress(p)
		}
	}
	call.Asker, call.OnMessage, call.Holdable, call.Cancel = nil, nil, false, nil
	if req.task != nil && req.task.modern {
		call.Asker = &taskAsker{srv: hs.srv, caps: req.caps, call: func() *jobs.Call { return jc }}
	}
	entry := req.entry
	started := make(chan struct{})
	jc, err := m.Start(spec, func(jctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-started // jc is set (and a background call's job written)
		if err := context.Cause(jctx); err != nil {
			return nil, err
		}
		return hs.srv.relay.CallTool(jctx, entry, call)
	})
	if err != nil {
		hs.replyToolError(req, err.Error())
		return
	}
	if background {
		// A job before the call starts: its answer is the job, however
		// fast the call.
		if _, _, err := jc.Promote(context.WithoutCancel(ctx)); err != nil {
			jc.CancelUnlessJob(&relay.Cause{Kind: relay.JobCancelled, Detail: "a failed write of its job"})
			close(started)
			<-jc.Done()
			hs.replyToolError(req, "mcpx could not keep this call as a job: "+err.Error())
			return
		}
	}
	close(started)
	stopCancel := context.AfterFunc(ctx, func() { jc.CancelUnlessJob(context.Cause(ctx)) })
	defer stopCancel()
	stopForwarding := func() { fwd.Lock(); fwd.off = true; fwd.Unlock() }
	hs.awaitCall(ctx, req, jc, timer, background, stopForwarding)
}

// awaitJob waits on a retry's job within the host's window.
func (hs *hostSession) awaitJob(ctx context.Context, req *request, c *jobs.Call, timer time.Duration, background bool) {
	hs.awaitCall(ctx, req, c, timer, background, func() {})
}

// awaitCall answers the host with c's result if it comes in time, or
// else, before the host's timer (at once for background), with the job c
// has become.
func (hs *hostSession) awaitCall(ctx context.Context, req *request, c *jobs.Call, timer time.Duration, background bool, promoted func()) {
	var fire <-chan time.Time
	switch {
	case background:
		// The job, at once, however fast the call (relayAsJob wrote it
		// before the call started).
		now := make(chan time.Time, 1)
		now <- time.Time{}
		fire = now
		if c.ID() != "" {
			hs.replyRunning(req, c)
			return
		}
	case req.task != nil:
		// A 2026-07-28 call the host takes a task for: a task once it
		// has run the configured time.
		t := time.NewTimer(max(req.task.after-time.Since(c.Start), 0))
		defer t.Stop()
		fire = t.C
	case timer > 0:
		t := time.NewTimer(max(timer-jobMargin(timer)-time.Since(c.Start), 0))
		defer t.Stop()
		fire = t.C
	}
	gone := hostGone(req.sink)
	for {
		select {
		case <-c.Done():
			hs.deliver(ctx, req, c)
			return
		case <-gone:
			// A legacy HTTP host left without a cancel: the call goes
			// on as a job, kept for the principal to collect.
			gone = nil
			if _, ok, err := c.Promote(context.WithoutCancel(ctx)); ok || err != nil {
				promoted()
				return
			}
		case <-ctx.Done():
			if c.ID() != "" {
				return // the host left or cancelled its wait: the job goes on
			}
			<-c.Done() // CancelUnlessJob ended it
			hs.deliver(ctx, req, c)
			return
		case <-fire:
			fire = nil
			id, ok, err := c.Promote(context.WithoutCancel(ctx))
			if err != nil {
				hs.replyToolError(req, "mcpx could not keep this call as a job: "+err.Error())
				return
			}
			if !ok {
				continue // it ended first: its result is there
			}
			promoted()
			hs.replyRunningID(req, c, id)
			return
		}
	}
}

// replyRunning answers the host with the running job c has become.
func (hs *hostSession) replyRunning(req *request, c *jobs.Call) { hs.replyRunningID(req, c, c.ID()) }

func (hs *hostSession) replyRunningID(req *request, c *jobs.Call, id string) {
	p, moved := c.LastProgress()
	if req.task != nil {
		hs.replyTask(req, c, id)
		return
	}
	var pp *jobs.Progress
	if moved {
		pp = &p
	}
	hs.replyJSON(req, runningResult(id, c.Spec().Tool, time.Since(c.Start), hs.answerWindow(req, true), pp))
}

// deliver answers the host with the ended call's result, as relayCall would.
func (hs *hostSession) deliver(ctx context.Context, req *request, c *jobs.Call) {
	res, err := c.Result()
	live := func() bool {
		cause, ok := relay.CauseOf(context.Cause(ctx))
		return !ok || cause.Answered()
	}
	var m *jsonrpc.Message
	if err != nil {
		if cause, ok := relay.CauseOf(err); ok && !cause.Answered() {
			return
		}
		m = jsonrpc.NewError(req.msg.ID, callError(err, c.Spec().Server))
	} else {
		m = jsonrpc.NewResult(req.msg.ID, hs.toolResult(req, res))
	}
	pushAnswer(req.sink, live, m.Encode())
}

// hostGone returns a channel closed when a legacy HTTP host has left the
// request's stream; nil (never) for any other sink.
func hostGone(s sink) <-chan struct{} {
	if a, ok := s.(*answeredSink); ok {
		s = a.sink
	}
	if h, ok := s.(*httpSink); ok && !h.modern {
		return h.ctx.Done()
	}
	return nil
}

// idempotent reports whether server's tool is annotated idempotentHint.
func (hs *hostSession) idempotent(ctx context.Context, server, tool string) bool {
	return jobs.Idempotent(ctx, hs.srv.relay, server, tool)
}

func (hs *hostSession) replyToolError(req *request, text string) {
	reply(req.sink, req.msg.ID, req.result(jsonrpc.MustMarshal(toolError(text)), hs.srv.info))
}

func (hs *hostSession) replyJSON(req *request, v any) {
	reply(req.sink, req.msg.ID, req.result(jsonrpc.MustMarshal(v), hs.srv.info))
}

// adoptWhenGone watches a legacy HTTP host's request stream while call
// runs on this goroutine: if the host leaves without a cancel (some hosts
// do, on their own timeout), the call becomes a job kept for the host's
// principal, instead of a result nobody reads. The returned end must be
// called with the call's outcome; it reports whether the call was a job
// (then there is nobody to answer).
func (hs *hostSession) adoptWhenGone(ctx context.Context, req *request, call *relay.Call) (end func(json.RawMessage, error) bool) {
	m, gone := hs.srv.opts.Jobs, hostGone(req.sink)
	if m == nil || gone == nil || call.Cancel == nil {
		return func(json.RawMessage, error) bool { return false }
	}
	var mu sync.Mutex
	var job *jobs.Call
	ended := false
	started := time.Now()
	cancel := call.Cancel
	// The relay edits call.Params as it runs: the job keeps the host's own
	// bytes (a direct call's, never edited) or a copy made now (mcpx_call's).
	params := req.msg.Params
	if call.Params != req.params {
		params = call.Params.Bytes()
	}
	principal, server, tool, reqID := hs.jobPrincipal(), call.Server, call.Tool, req.msg.ID.String()
	watch := context.AfterFunc(hostCtx(req.sink), func() {
		mu.Lock()
		defer mu.Unlock()
		if ended {
			return
		}
		var p struct {
			Args json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(params, &p)
		spec := jobs.Spec{Principal: principal, Server: server, Tool: tool, Key: jobs.Key(server, tool, p.Args),
			Params: params, Idempotent: hs.idempotent(context.WithoutCancel(ctx), server, tool)}
		c, err := m.Adopt(context.WithoutCancel(ctx), spec, cancel, started)
		if err != nil {
			hs.srv.log.Warn("the host left mid-call and the call could not become a job", "tool", tool, "err", err)
			return
		}
		hs.srv.log.Info("the host left mid-call: the call goes on as a job", "job", c.ID(), "host", hs.id, "id", reqID, "server", server, "tool", tool)
		job = c
	})
	return func(res json.RawMessage, err error) bool {
		watch()
		mu.Lock()
		ended = true
		c := job
		mu.Unlock()
		if c == nil {
			return false
		}
		c.Finish(res, err)
		return true
	}
}

// hostCtx returns a legacy HTTP request's context (done once the host has
// gone); only for sinks hostGone finds one for.
func hostCtx(s sink) context.Context {
	if a, ok := s.(*answeredSink); ok {
		s = a.sink
	}
	return s.(*httpSink).ctx
}

// jobPrincipal is who a job of this host belongs to: an HTTP host's
// token holder (which outlives this process, as its jobs do), or a stream
// connection, named uniquely across processes (connection numbers start
// again with each gateway; its jobs are this connection's alone).
func (hs *hostSession) jobPrincipal() string {
	p := hs.principal()
	if strings.HasPrefix(p, "conn:") {
		return p + "@" + hs.srv.opts.Jobs.Owner()
	}
	return p
}
