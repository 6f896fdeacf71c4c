package hostserver

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
)

// jobLink is how a call (or script) that runs on its host request's own
// goroutine becomes a job while it runs, made only for a call that may
// (request.job), so that a call that ends in time costs one allocation
// more, and a call that never may nothing: no goroutine, no context, no
// timer of its own (the relay's call timer tells it when:
// relay.Call.Deadline), nothing in the store. Saves a goroutine, its
// stack growth and about 25 allocations a call (BenchmarkJobHardTimerHost,
// in internal/hostserver).
//
// DeadlineReached, at the host's deadline, makes the call a job: its row is
// written, the host is answered with it, and the request is released
// from its session at once (its sink finished, its handler counted
// gone): the goroutine, still in the call, is the job manager's from
// then on, and the call's context (the request's) no longer ends with
// the host's connection (the answered request has left the registry).
// end, when the call returns, writes the job's end. A legacy HTTP host
// that leaves without a cancel makes it a job too (promote(false)),
// without an answer, its request still registered for a late cancel.
type jobLink struct {
	hs  *hostSession
	req *request
	cd  candidate
	// who is the host's principal with its client's name, read from the
	// request as the link is made: the relay edits the request's _meta
	// while the call runs, and the link becomes a job on its timer.
	who principal.Principal
	// asker is the host's Asker, which the link stands in front of
	// (Can, Ask, Notify) until the call is a job.
	asker    relay.Asker
	stopGone func() bool // stops the watch on a legacy HTTP host (nil: none)
	onOff    func()      // called as the host stops hearing of the call

	off      atomic.Bool // the host hears no more of the call
	released atomic.Bool // the request's end was done as it became a job

	mu    sync.Mutex
	job   *jobs.Call // set once the call is a job
	ended bool       // the call has ended: too late to become one
	waits *linkWaits // made by the call's first question (jobask.go)
}

// since is when the host's timer for the request started.
func (l *jobLink) since() time.Time {
	if l.req.entry != nil {
		return l.req.entry.Started
	}
	return time.Now()
}

// live reports whether the host still hears of the call.
func (l *jobLink) live() bool { return !l.off.Load() }

// jobCall returns the job the call has become, nil before.
func (l *jobLink) jobCall() *jobs.Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.job
}

// DeadlineReached makes the call a job and answers the host with it:
// the relay's call timer calls it at the host's deadline.
func (l *jobLink) DeadlineReached() { l.promote(true) }

// promote makes the call a job unless it has ended or is one: answered
// with it (and the request released) if answer, else, for a host that
// left, kept for the host's principal with nobody to answer.
func (l *jobLink) promote(answer bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended || l.job != nil {
		return
	}
	hs, req := l.hs, l.req
	c, err := hs.srv.opts.Jobs.Start(context.WithoutCancel(req.ctx), l.spec(), jobs.Adopted(req.cancel, l.since()))
	if err != nil {
		if !answer {
			hs.srv.log.Warn("the host left mid-call and the call could not become a job", "tool", l.cd.tool, "err", err)
			return
		}
		// The host is told before its timer fires, and nothing after;
		// the call, which nobody would read, ends.
		l.stopHostLocked()
		hs.replyToolError(req, "mcpx could not keep this call as a job: "+err.Error())
		req.cancel(&relay.Cause{Kind: relay.JobCancelled, Detail: "a failed write of its job"})
		return
	}
	l.job = c
	defer l.promotedLocked() // its questions that wait wait as a job's (jobask.go)
	// The call's progress, as its registry entry has it (its upstream's,
	// or a script's own): the job's from now on.
	if e := req.entry; e != nil {
		if p, ok := e.LastProgress(); ok {
			c.SetProgress(jobs.Progress{Progress: p.Value, Total: p.Total, Message: p.Message})
		}
		e.OnProgress(func(p relay.Progress) {
			c.SetProgress(jobs.Progress{Progress: p.Value, Total: p.Total, Message: p.Message})
		})
	}
	l.stopHostLocked()
	if !answer {
		sp := c.Spec()
		hs.srv.log.Info("the host left mid-call: the call goes on as a job", "job", c.ID(), "host", hs.id, "id", req.msg.ID.String(), "server", sp.Server, "tool", sp.Tool)
		// Until the call ends, its request stays registered: a cancel
		// the host sends for it still reaches the call; its session's
		// end no longer does.
		if req.entry != nil {
			req.entry.Intercept(func(cause error) {
				if c, ok := relay.CauseOf(cause); ok && c.Kind == relay.HostCancelled {
					req.cancel(cause)
				}
			})
		}
		return
	}
	hs.replyRunningID(req, c, c.ID(), l.cd.timer)
	// The request's end, now: its goroutine goes on in the call, for the
	// job (execute and the handler loops see released).
	hs.release(req)
	l.released.Store(true)
}

// stopHostLocked ends what the host hears of the call: once it returns,
// nothing (l.mu is held).
func (l *jobLink) stopHostLocked() {
	l.off.Store(true)
	if l.onOff != nil {
		l.onOff()
	}
}

// spec is what the job keeps of its call, read as it becomes one: most
// calls never do.
func (l *jobLink) spec() jobs.Spec {
	hs, cd := l.hs, l.cd
	sp := jobs.Spec{Principal: hs.jobPrincipal(), Server: cd.server, Tool: cd.tool, Key: cd.key, Who: l.who}
	if cd.script {
		// Never run again, not idempotent: its params say only which
		// filter it ran under (policyfilter.go).
		sp.Params = hs.filterOf(l.who).scriptJobParams()
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
	sp.Idempotent = hs.idempotent(context.WithoutCancel(l.req.ctx), cd.server, cd.tool)
	return sp
}

// end takes the call's outcome: it reports whether the call had become a
// job (its end is then written, and there is nobody to answer).
func (l *jobLink) end(res json.RawMessage, err error) bool {
	if l.stopGone != nil {
		l.stopGone()
	}
	l.mu.Lock()
	l.ended = true
	c := l.job
	l.mu.Unlock()
	if c == nil {
		return false
	}
	if err == nil {
		res = l.jobResult(c, res) // jobask.go
	}
	c.Finish(res, err)
	return true
}

// Can, Ask and Notify are the host's request's until the call is a job;
// then its questions go to the host that started it while it can be
// asked, and are refused, naming the job, when not (jobask.go).
//
// A call whose host's request cannot carry requests (a legacy HTTP POST
// answered as plain JSON) has no asker of its own (nil): until it is a
// job, it asks nothing.
func (l *jobLink) Can(method string, params json.RawMessage) bool {
	if l.live() {
		return l.asker != nil && l.asker.Can(method, params)
	}
	c := l.jobCall()
	return c != nil && l.jobRefusal(c, method, params) == nil
}

func (l *jobLink) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if l.live() {
		switch a := l.asker.(type) {
		case *hostAsker:
			return l.askLive(ctx, a, method, params) // jobask.go
		case nil:
			return nil, errors.New("mcpx cannot put requests to this host on its request's stream (a plain JSON response)")
		}
		return l.asker.Ask(ctx, method, params)
	}
	if c := l.jobCall(); c != nil {
		return l.askJobHost(ctx, c, method, params)
	}
	return nil, errors.New("the call ended as its host was answered")
}

func (l *jobLink) Notify(method string, params json.RawMessage) {
	if l.live() {
		if l.asker != nil {
			l.asker.Notify(method, params)
		}
		return
	}
	l.jobLine(jsonrpc.NewNotification(method, params).Encode())
}

// Refusal implements relay.Refuser: why the job the call became cannot
// put method to its host; nil while the call is its host request's.
func (l *jobLink) Refusal(method string, params json.RawMessage) *jsonrpc.Error {
	if l.live() {
		return nil
	}
	c := l.jobCall()
	if c == nil {
		return nil
	}
	return l.jobRefusal(c, method, params)
}

// AuditJob is the id of the job the call became, "" while none (the
// relay's AuditNamer: the call's audit record names it).
func (l *jobLink) AuditJob() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.job == nil {
		return ""
	}
	return l.job.ID()
}
