package hostserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"mcpx/internal/hostjobs"
	"mcpx/internal/hostprofile"
	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
)

// candidate is what a call (or script) that may become a job is: where it
// goes, its job key ("" until a job needs one), the host's hard timer (0:
// none), and whether its host asked for it to run in the background.
type candidate struct {
	server, tool, key string
	// params are the tools/call params a job keeps, to run it again after
	// a restart; nil for a script (never run again).
	params     json.RawMessage
	timer      time.Duration
	background bool
	script     bool
}

// becomeCandidate readies req's call to become a job, on req's own
// goroutine, if it may: a hard-timer host's, a background one, a task, or
// any call of a legacy HTTP host (which may leave without a cancel). A
// retry of a running job's call by the same principal waits on that job
// instead (attached is then true: req is answered). It returns req's
// jobHost, nil for a call that can never become a job (it pays nothing
// for jobs), and when the link must be told DeadlineReached (zero: never by
// time). A background call is a job before it runs: attached is true if
// it could not become one (req is answered with why). onOff (nil: none)
// is called as the host stops hearing of the call. Whether the call may
// become a job is the principal's policy's (StartJob): refused, a job
// asked for (background, a 2025-11-25 task) is refused, and any other
// call is relayed as a plain one.
func (hs *hostSession) becomeCandidate(ctx context.Context, req *request, cd candidate, args json.RawMessage, onOff func()) (l *jobHost, promoteAt time.Time, attached bool) {
	m := hs.srv.opts.Jobs
	if req.task != nil {
		// A task is its own: no other call attaches to it, nor it to one.
		cd.key = "task:" + jobs.NewID()
	} else if cd.key != "" || m.HasJobs() {
		if cd.key == "" {
			cd.key = jobs.Key(cd.server, cd.tool, args)
		}
		if c := m.Attach(hs.jobPrincipal(), cd.key); c != nil {
			if onOff != nil {
				onOff() // its own progress: there is none
			}
			hs.awaitJob(ctx, req, c, cd.timer, cd.background)
			return nil, time.Time{}, true
		}
	}
	gone := hostGone(req.sink)
	if cd.timer <= 0 && !cd.background && req.task == nil && gone == nil {
		return nil, time.Time{}, false
	}
	pol, target := hs.toolFilter(req).pol, principal.Target{Server: cd.server, Tool: cd.tool}
	if !cd.background && req.task == nil && !pol.Allows(principal.StartJob, target) {
		// A call that would become a job past its host's timer, or as
		// its host leaves: a plain call, which that timer may end. No
		// job was asked for, so nothing was refused: no audit record.
		return nil, time.Time{}, false
	}
	if err := pol.Decide(principal.StartJob, target); err != nil {
		if onOff != nil {
			onOff()
		}
		if req.task != nil {
			fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s", err.Error()))
		} else {
			hs.replyToolError(req, err.Error())
		}
		return nil, time.Time{}, true
	}
	l = &jobHost{req: req, cd: cd, who: hs.who.WithClient(clientName(hs, req))}
	l.Host, l.Jobs, l.OnOff = l, m, onOff
	req.job.Store(l)
	since := l.Since()
	switch {
	case req.task != nil && req.task.modern:
		// A 2026-07-28 call the host takes a task for: a task once it
		// has run the configured time.
		promoteAt = since.Add(req.task.after)
	case cd.timer > 0 && !cd.background:
		promoteAt = since.Add(cd.timer - hostjobs.Margin(cd.timer))
	}
	if gone != nil {
		// A legacy HTTP host that leaves without a cancel (some do, on
		// their own timeout) leaves a job kept for its principal, not a
		// result nobody reads.
		link := l // not l, a result: captured, it would be moved to the heap on every call
		l.StopGone = context.AfterFunc(req.sink.hostContext(), func() { link.HostLeft() })
	}
	if cd.background {
		// A job before the call starts: its answer is the job, however
		// fast the call.
		l.DeadlineReached()
		if l.JobCall() == nil {
			l.End(nil, nil)
			return nil, time.Time{}, true
		}
	}
	return l, promoteAt, false
}

// relayCandidate relays call, which may become a job (becomeCandidate),
// on this goroutine; it reports false, having done nothing, for a call
// that can never become one, which the caller relays as any call.
func (hs *hostSession) relayCandidate(ctx context.Context, req *request, call relay.Call, live func() bool, timer time.Duration, background bool) bool {
	// What a job keeps of the call: the relay edits call.Params as it
	// runs, so the host's own bytes (a direct call's, never edited) or a
	// copy made now (mcpx_call's).
	params := req.msg.Params
	if call.Params != req.params {
		params = call.Params.Bytes()
	}
	if req.task != nil {
		params = hostjobs.WithGrantedTTL(params, req.task.ttl) // its job keeps the ttl granted
	}
	args, _ := call.Params.Get("arguments")
	cd := candidate{server: call.Server, tool: call.Tool, params: params, timer: timer, background: background}
	l, promoteAt, attached := hs.becomeCandidate(ctx, req, cd, args, nil)
	if attached {
		return true
	}
	if l == nil {
		return false
	}
	call.Deadline, call.OnDeadline = promoteAt, l
	if background {
		// No heartbeats: the host has its answer.
		call.HostProfile = hostprofile.Profile{}
	}
	switch {
	case req.task != nil:
		// A task's questions wait in the task for its host
		// (hostjobs/inputs.go), not held for a retry.
		call.Asker, call.Holdable = &taskAsker{tasks: &hs.srv.tasks, caps: req.caps, call: l.JobCall}, false
	default:
		// Until the call is a job its host hears its questions (if its
		// request can carry them: call.Asker nil if not); then they go
		// to the host's stream, or are refused naming the job.
		l.Asker, call.Asker = call.Asker, l
	}
	res, err := hs.srv.relay.CallTool(ctx, req.entry, call)
	if l.End(res, err) {
		return true // a job: its end is written, for its principal to collect
	}
	if hs.srv.log.Enabled(ctx, slog.LevelDebug) {
		hs.srv.log.Debug("answering host", "callId", callID(req), "host", hs.id, "hostRequestId", req.msg.ID.String(), "failed", err != nil)
	}
	hs.answerCall(req, live, res, err, call.Server)
	return true
}

// answerCall answers the host with a call's result or error; nothing for
// a call its host gave up (cancelled, or left).
func (hs *hostSession) answerCall(req *request, live func() bool, res json.RawMessage, err error, server string) {
	var m *jsonrpc.Message
	if err != nil {
		if c, ok := relay.CauseOf(err); ok && !c.Answered() {
			return
		}
		m = jsonrpc.NewError(req.msg.ID, callError(err, server))
	} else {
		m = jsonrpc.NewResult(req.msg.ID, hs.toolResult(req, res))
	}
	pushAnswer(req.sink, live, m.Encode())
}

// awaitJob answers a retry of running job c's call: with c's result if
// it comes within the host's window (timer, 0: none), else with the
// running job, before the host's timer fires (at once for background).
func (hs *hostSession) awaitJob(ctx context.Context, req *request, c *jobs.Call, timer time.Duration, background bool) {
	if background {
		hs.replyRunningID(req, c, c.ID(), timer)
		return
	}
	var fire <-chan time.Time
	if timer > 0 {
		since := time.Now()
		if req.entry != nil {
			since = req.entry.Started // the host's timer runs from its request
		}
		t := time.NewTimer(max(timer-hostjobs.Margin(timer)-time.Since(since), 0))
		defer t.Stop()
		fire = t.C
	}
	select {
	case <-c.Done():
		res, err := c.Result()
		hs.answerCall(req, liveWhile(ctx), res, err, c.Spec().Server)
	case <-ctx.Done():
		// The host cancelled its wait, or left: the job goes on.
	case <-fire:
		hs.replyRunningID(req, c, c.ID(), timer)
	}
}

// liveWhile is a request's live: true until ctx ends with a cause its
// host is not answered after (its cancel, its leaving).
func liveWhile(ctx context.Context) func() bool {
	return func() bool {
		c, ok := relay.CauseOf(context.Cause(ctx))
		return !ok || c.Answered()
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
	hs.replyJSON(req, hostjobs.Running(id, c.Spec().Tool, time.Since(c.Start), hostjobs.AnswerWindow(timer), pp))
}

// jobLive reports whether req's host still hears of its call: true
// unless the call became a job.
func (req *request) jobLive() bool {
	l := req.job.Load()
	return l == nil || l.Live()
}

// hostGone returns a channel closed when a legacy HTTP host has left the
// request's stream; nil (never) for any other sink.
func hostGone(s sink) <-chan struct{} {
	if ctx := s.hostContext(); ctx != nil {
		return ctx.Done()
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
