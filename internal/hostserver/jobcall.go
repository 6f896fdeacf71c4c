package hostserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"mcpx/internal/hostprofile"
	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/relay"
)

// A call that would outlive its host's hard timer becomes a job this long
// before the timer fires: a fifth of the timer, at most 5 s. The host must
// have the answer in hand before its timer fires, across its own
// scheduling and the transport.
const maxJobMargin = 5 * time.Second

// jobMargin returns how long before a timer of t the call becomes a job.
func jobMargin(t time.Duration) time.Duration { return min(t/5, maxJobMargin) }

// jobTimer returns how long a host with profile p waits for a call
// whatever happens, 0 if it has no such timer: a timer progress does not
// reset, or one it would but the host gave no progress token to carry
// progress.
func jobTimer(p hostprofile.Profile, hasToken bool) time.Duration {
	if p.Timeout <= 0 || p.ResetOnProgress && hasToken {
		return 0
	}
	return p.Timeout
}

// answerWindow is how long mcpx may keep a host whose hard timer is timer
// (0: none) waiting on a job: up to the margin before that timer, else
// maxJobWait.
func answerWindow(timer time.Duration) time.Duration {
	if timer > 0 {
		return timer - jobMargin(timer)
	}
	return maxJobWait
}

// maxJobWait is the longest mcpx_job waits for a host with no hard timer.
const maxJobWait = 60 * time.Second

// relayAsJob relays a call that may become a job: a hard-timer host's, a
// background one, or a retry of a running job's call (which attaches to
// it). The call runs on the job manager's goroutine under a context the
// host's request does not end; the host's cancel reaches it until it is a
// job, and so do its questions and log messages (progressGate).
func (hs *hostSession) relayAsJob(ctx context.Context, req *request, call relay.Call, timer time.Duration, background bool, key string) {
	m := hs.srv.opts.Jobs
	switch {
	case req.task != nil:
		// A task is its own: no other call attaches to it, nor it to one.
		key = "task:" + jobs.NewID()
	case key == "" && m.HasJobs():
		args, _ := call.Params.Get("arguments")
		key = jobs.Key(call.Server, call.Tool, args)
	}
	if key != "" {
		if c := m.Attach(hs.jobPrincipal(), key); c != nil {
			hs.awaitJob(ctx, req, c, timer, background)
			return
		}
	}
	// What the job keeps of the call is read when it becomes one: most
	// calls never do. The relay edits call.Params as it runs, so the job
	// keeps the host's own bytes (a direct call's, never edited) or a
	// copy made now (mcpx_call's).
	params := req.msg.Params
	if call.Params != req.params {
		params = call.Params.Bytes()
	}
	server, tool := call.Server, call.Tool
	spec := jobs.Spec{
		Server: server, Tool: tool, Key: key,
		Describe: func(sp *jobs.Spec) {
			sp.Principal, sp.Params = hs.jobPrincipal(), params
			if sp.Key == "" {
				var p struct {
					Args json.RawMessage `json:"arguments"`
				}
				_ = json.Unmarshal(params, &p)
				sp.Key = jobs.Key(server, tool, p.Args)
			}
			sp.Idempotent = hs.idempotent(context.WithoutCancel(ctx), server, tool)
		},
	}
	fwd := &progressGate{host: call.Progress, asker: call.Asker, onMessage: call.OnMessage}
	if call.HostToken == nil {
		call.HostToken = json.RawMessage(`"mcpx-job"`)
	}
	// Until the call is a job, its host hears of it as of any call: its
	// questions, its log messages. Then the host's request is answered:
	// the job's questions are refused (as if the host could not answer
	// them), its log messages are not relayed.
	if call.Asker != nil {
		call.Asker = fwd
	}
	if call.OnMessage != nil {
		call.OnMessage = fwd.message
	}
	// No heartbeats: a job's progress is its server's own.
	call.HostProfile = hostprofile.Profile{}
	var taskCall *jobs.Call // set before the call starts, on its goroutine
	if req.task != nil && req.task.modern {
		// A 2026-07-28 task's questions wait in the task for its host's
		// tasks/update (taskinput.go), not held for a retry.
		call.Asker, call.Holdable = &taskAsker{srv: hs.srv, caps: req.caps, call: func() *jobs.Call { return taskCall }}, false
	}
	entry := req.entry
	var started chan struct{} // a background call waits for its job's row
	if background {
		started = make(chan struct{})
	}
	jc, err := m.Start(spec, func(jctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		if started != nil {
			<-started
			if err := context.Cause(jctx); err != nil {
				return nil, err
			}
		}
		fwd.job, taskCall = c, c
		call.Progress = fwd.progress
		// The call's context is its own: its timers end it directly
		// (no context of the relay's as well).
		call.Cancel = c.CancelFunc()
		return hs.srv.relay.CallTool(jctx, entry, call)
	})
	if err != nil {
		hs.replyToolError(req, err.Error())
		return
	}
	if background {
		// A job before the call starts: its answer is the job, however
		// fast the call.
		_, _, err := jc.Promote(context.WithoutCancel(ctx))
		if err != nil {
			jc.CancelUnlessJob(&relay.Cause{Kind: relay.JobCancelled, Detail: "a failed write of its job"})
		}
		close(started)
		if err != nil {
			<-jc.Done()
			hs.replyToolError(req, "mcpx could not keep this call as a job: "+err.Error())
			return
		}
	}
	// The host's cancel reaches the call until it is a job; after, only
	// an explicit cancel of a request that never had its answer does (a
	// legacy HTTP host that left, then cancelled): a request answered
	// with the job has left the registry. The registry's cancel comes in
	// the same step as the host's message (Also); other ends of the
	// request's context (its own end, HTTP) through AfterFunc.
	if req.entry != nil {
		req.entry.Also(func(cause error) {
			if c, ok := relay.CauseOf(cause); ok && c.Kind == relay.HostCancelled {
				jc.Cancel(cause)
				return
			}
			jc.CancelUnlessJob(cause)
		})
	}
	stopCancel := context.AfterFunc(ctx, func() { jc.CancelUnlessJob(context.Cause(ctx)) })
	defer stopCancel()
	hs.awaitCall(ctx, req, jc, timer, background, fwd.stop)
	if hs.srv.log.Enabled(ctx, slog.LevelDebug) {
		hs.srv.log.Debug("answering host", "callId", callID(req), "host", hs.id, "hostRequestId", req.msg.ID.String(), "job", jc.ID() != "")
	}
}

// progressGate passes a call's progress to its job, and its progress,
// questions and log messages to its host until the host's request is
// answered with the job.
type progressGate struct {
	host      func(json.RawMessage) // nil: the host asked for none
	asker     relay.Asker
	onMessage func(*jsonrpc.Message)
	job       *jobs.Call // set before the call starts

	mu  sync.Mutex
	off bool
}

func (g *progressGate) isOff() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.off
}

// Can, Ask and Notify are the host's until the call is a job.
func (g *progressGate) Can(method string, params json.RawMessage) bool {
	return !g.isOff() && g.asker.Can(method, params)
}

func (g *progressGate) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if g.isOff() {
		return nil, errors.New("the call became a job: its host's request is answered")
	}
	return g.asker.Ask(ctx, method, params)
}

func (g *progressGate) Notify(method string, params json.RawMessage) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.off {
		g.asker.Notify(method, params)
	}
}

func (g *progressGate) message(msg *jsonrpc.Message) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.off {
		g.onMessage(msg)
	}
}

func (g *progressGate) progress(p json.RawMessage) {
	var pr jobs.Progress
	if json.Unmarshal(p, &pr) == nil {
		g.job.SetProgress(pr)
	}
	if g.host == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.off {
		g.host(p)
	}
}

// stop ends the progress to the host: once it returns, none is sent.
func (g *progressGate) stop() {
	g.mu.Lock()
	g.off = true
	g.mu.Unlock()
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
			hs.replyRunningID(req, c, c.ID(), timer)
			return
		}
	case req.task != nil:
		// A 2026-07-28 call the host takes a task for: a task once it
		// has run the configured time.
		t := time.NewTimer(max(req.task.after-time.Since(c.Start), 0))
		defer t.Stop()
		fire = t.C
	case timer > 0:
		since := c.Start // the host's timer runs from its request
		if req.entry != nil {
			since = req.entry.Started
		}
		t := time.NewTimer(max(timer-jobMargin(timer)-time.Since(since), 0))
		defer t.Stop()
		fire = t.C
	}
	gone := hostGone(req.sink)
	left := false // the host left: the request stays, for its cancel, with nobody to answer
	for {
		select {
		case <-c.Done():
			if !left {
				hs.deliver(ctx, req, c)
			}
			return
		case <-gone:
			// A legacy HTTP host left without a cancel: the call goes
			// on as a job, kept for the principal to collect.
			gone = nil
			id, ok, err := c.Promote(context.WithoutCancel(ctx))
			if err != nil {
				hs.srv.log.Warn("the host left mid-call and the call could not become a job", "tool", c.Spec().Tool, "err", err)
			}
			if ok {
				sp := c.Spec()
				hs.srv.log.Info("the host left mid-call: the call goes on as a job", "job", id, "host", hs.id, "id", req.msg.ID.String(), "server", sp.Server, "tool", sp.Tool)
				promoted()
				// Until the call ends, the request stays registered: a
				// cancel the host sends for it still reaches the call.
				left, fire = true, nil
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
			hs.replyRunningID(req, c, id, timer)
			return
		}
	}
}

// replyRunningID answers the host, whose hard timer is timer (0: none),
// with the running job id that c has become.
func (hs *hostSession) replyRunningID(req *request, c *jobs.Call, id string, timer time.Duration) {
	p, moved := c.LastProgress()
	if req.task != nil {
		hs.replyTask(req, c, id)
		return
	}
	var pp *jobs.Progress
	if moved {
		pp = &p
	}
	hs.replyJSON(req, runningResult(id, c.Spec().Tool, time.Since(c.Start), answerWindow(timer), pp))
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
// token holder (which outlives this process, as its jobs do), or, for a
// host on a stream, the local user (jobs.LocalPrincipal): a host that
// restarts finds its jobs again, as does the user with mcpx jobs.
func (hs *hostSession) jobPrincipal() string {
	if p := hs.principal(); !strings.HasPrefix(p, "conn:") {
		return p
	}
	return jobs.LocalPrincipal
}
