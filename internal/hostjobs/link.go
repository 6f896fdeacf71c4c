package hostjobs

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/relay"
)

// Link is how a call (or script) that runs on its host request's own
// goroutine becomes a job while it runs, made only for a call that may,
// so that a call that ends in time costs one allocation more, and a call
// that never may nothing: no goroutine, no context, no timer of its own
// (the relay's call timer tells it when: relay.Call.Deadline), nothing
// in the store. Saves a goroutine, its stack growth and about 25
// allocations a call (BenchmarkJobHardTimerHost, in internal/hostserver).
// The host session embeds it in its own side of the call (Host), so that
// the two are one allocation.
//
// DeadlineReached, at the host's deadline, makes the call a job: its row is
// written, the host is answered with it, and the request is released
// from its session at once (Host.Release: its sink finished, its handler
// counted gone): the goroutine, still in the call, is the job manager's
// from then on, and the call's context (the request's) no longer ends
// with the host's connection (the answered request has left the
// registry). End, when the call returns, writes the job's end. A legacy
// HTTP host that leaves without a cancel makes it a job too (HostLeft),
// without an answer, its request still registered for a late cancel.
//
// Host, Jobs, OnOff, Asker and StopGone are set before the link is
// shared.
type Link struct {
	// Host is the call's request and its host's session.
	Host Host
	// Jobs is the manager the call becomes a job of (Manager.Start,
	// with jobs.Adopted).
	Jobs *jobs.Manager
	// Asker is the host's Asker, which the link stands in front of
	// (Can, Ask, Notify) until the call is a job.
	Asker    relay.Asker
	StopGone func() bool // stops the watch on a legacy HTTP host (nil: none)
	OnOff    func()      // called as the host stops hearing of the call

	off      atomic.Bool // the host hears no more of the call
	making   atomic.Bool // promote has begun: the call is being made a job
	released atomic.Bool // the request's end was done as it became a job

	mu    sync.Mutex
	job   *jobs.Call // set once the call is a job
	ended bool       // the call has ended: too late to become one
	waits *linkWaits // made by the call's first question (askwait.go)
}

// Since is when the host's timer for the request started.
func (l *Link) Since() time.Time {
	if e := l.Host.Entry(); e != nil {
		return e.Started
	}
	return time.Now()
}

// Live reports whether the host still hears of the call.
func (l *Link) Live() bool { return !l.off.Load() }

// Released reports whether the request was given up to its session as
// the call became a job (Host.Release): its goroutine is the job's.
func (l *Link) Released() bool { return l.released.Load() }

// JobCall returns the job the call has become, nil before.
func (l *Link) JobCall() *jobs.Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.job
}

// DeadlineReached makes the call a job and answers the host with it:
// the relay's call timer calls it at the host's deadline.
func (l *Link) DeadlineReached() { l.promote(true) }

// HostLeft makes the call a job kept for the host's principal, with
// nobody to answer: its legacy HTTP host left without a cancel.
func (l *Link) HostLeft() { l.promote(false) }

// promote makes the call a job unless it has ended or is one: answered
// with it (and the request released) if answer, else, for a host that
// left, kept for the host's principal with nobody to answer.
func (l *Link) promote(answer bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended || l.job != nil {
		return
	}
	l.making.Store(true) // its questions from now on are the job's (Can, Ask)
	h := l.Host
	ctx, sp, cancel := h.Job()
	c, err := l.Jobs.Start(context.WithoutCancel(ctx), sp, jobs.Adopted(cancel, l.Since()))
	if err != nil {
		if !answer {
			h.Log().Warn("the host left mid-call and the call could not become a job", "tool", sp.Tool, "err", err)
			return
		}
		// The host is told before its timer fires, and nothing after;
		// the call, which nobody would read, ends.
		l.stopHostLocked()
		h.ReplyToolError("mcpx could not keep this call as a job: " + err.Error())
		cancel(&relay.Cause{Kind: relay.JobCancelled, Detail: "a failed write of its job"})
		return
	}
	l.job = c
	defer l.promotedLocked() // its questions that wait wait as a job's (askwait.go)
	// The call's progress, as its registry entry has it (its upstream's,
	// or a script's own): the job's from now on.
	if e := h.Entry(); e != nil {
		if p, ok := e.LastProgress(); ok {
			c.SetProgress(jobs.Progress{Progress: p.Value, Total: p.Total, Message: p.Message})
		}
		e.OnProgress(func(p relay.Progress) {
			c.SetProgress(jobs.Progress{Progress: p.Value, Total: p.Total, Message: p.Message})
		})
	}
	l.stopHostLocked()
	if !answer {
		h.Log().Info("the host left mid-call: the call goes on as a job", "job", c.ID(), "host", h.HostID(), "id", h.RequestID(), "server", sp.Server, "tool", sp.Tool)
		// Until the call ends, its request stays registered: a cancel
		// the host sends for it still reaches the call; its session's
		// end no longer does.
		if e := h.Entry(); e != nil {
			e.Intercept(func(cause error) {
				if c, ok := relay.CauseOf(cause); ok && c.Kind == relay.HostCancelled {
					cancel(cause)
				}
			})
		}
		return
	}
	h.ReplyJob(c)
	// The request's end, now: its goroutine goes on in the call, for the
	// job (the session's execute and handler loops see Released).
	h.Release()
	l.released.Store(true)
}

// stopHostLocked ends what the host hears of the call: once it returns,
// nothing (l.mu is held).
func (l *Link) stopHostLocked() {
	l.off.Store(true)
	if l.OnOff != nil {
		l.OnOff()
	}
}

// End takes the call's outcome: it reports whether the call had become a
// job (its end is then written, and there is nobody to answer).
func (l *Link) End(res json.RawMessage, err error) bool {
	if l.StopGone != nil {
		l.StopGone()
	}
	l.mu.Lock()
	l.ended = true
	c := l.job
	l.mu.Unlock()
	if c == nil {
		return false
	}
	if err == nil {
		res = l.jobResult(c, res) // ask.go
	}
	c.Finish(res, err)
	return true
}

// Can, Ask and Notify are the host's request's until the call is a job;
// then its questions go to the host that started it while it can be
// asked, and are refused, naming the job, when not (ask.go).
//
// A call whose host's request cannot carry requests (a legacy HTTP POST
// answered as plain JSON) has no asker of its own (nil): until it is
// being made a job, it asks nothing. A question that comes while it is
// (its row being written, which a loaded store makes slow) is the job's:
// Ask waits for the job.
func (l *Link) Can(method string, params json.RawMessage) bool {
	if l.Live() {
		if l.Asker == nil {
			return l.making.Load() && l.cannotAsk(method, params) == ""
		}
		return l.Asker.Can(method, params)
	}
	c := l.JobCall()
	return c != nil && l.jobRefusal(c, method, params) == nil
}

func (l *Link) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if l.Live() {
		switch a := l.Asker.(type) {
		case LiveAsker:
			return l.askLive(ctx, a, method, params) // askwait.go
		case nil:
			if !l.making.Load() {
				return nil, errors.New("mcpx cannot put requests to this host on its request's stream (a plain JSON response)")
			}
			// JobCall waits for the job being made.
		default:
			return l.Asker.Ask(ctx, method, params)
		}
	}
	if c := l.JobCall(); c != nil {
		return l.askJobHost(ctx, c, method, params)
	}
	return nil, errors.New("the call ended as its host was answered")
}

func (l *Link) Notify(method string, params json.RawMessage) {
	if l.Live() {
		if l.Asker != nil {
			l.Asker.Notify(method, params)
		}
		return
	}
	l.JobLine(jsonrpc.NewNotification(method, params).Encode())
}

// Refusal implements relay.Refuser: why the job the call became cannot
// put method to its host; nil while the call is its host request's.
func (l *Link) Refusal(method string, params json.RawMessage) *jsonrpc.Error {
	if l.Live() && (l.Asker != nil || !l.making.Load()) {
		return nil
	}
	c := l.JobCall() // waits for the job being made
	if c == nil {
		return nil
	}
	return l.jobRefusal(c, method, params)
}

// AuditJob is the id of the job the call became, "" while none (the
// relay's AuditNamer: the call's audit record names it).
func (l *Link) AuditJob() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.job == nil {
		return ""
	}
	return l.job.ID()
}
