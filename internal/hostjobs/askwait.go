package hostjobs

import (
	"context"
	"encoding/json"
	"slices"

	"mcpx/internal/jobs"
)

// A question a call put to its host before it became a job, and what
// the job's waiting questions show in its progress.

// askLive puts a question to the host while the call is its request's,
// on the request's stream (a), and waits for the answer or ctx's end. If
// the call becomes a job meanwhile, the request no longer ends with its
// host (it has left the registry), and a legacy HTTP response stream
// ends with the job answer: from then on the question waits as a job's
// does (waitJobHost), on the stream the job's questions go on; with no
// such stream it fails at once, as a job's new question is refused. A
// question that finds the request's stream ended (the call became a job
// just before) is put as a job's question.
func (l *Link) askLive(ctx context.Context, a LiveAsker, method string, params json.RawMessage) (json.RawMessage, error) {
	promoted, c := l.promotion()
	if c != nil {
		return l.askJobHost(ctx, c, method, params)
	}
	h := l.Host
	id, ch, err := a.Put(method, params)
	defer h.Questions().Remove(id)
	if err != nil {
		if c := l.JobCall(); c != nil {
			return l.askJobHost(ctx, c, method, params)
		}
		return nil, err
	}
	select {
	case m := <-ch:
		return AnswerOf(m)
	case <-ctx.Done():
		cause := context.Cause(ctx)
		if a.Push(Withdrawal(id, cause)) != nil && l.JobCall() != nil {
			if q := h.JobStream(); q != nil {
				_ = q.Push(Withdrawal(id, cause))
			}
		}
		return nil, cause
	case <-promoted:
	}
	c = l.JobCall()
	defer l.waitingOn(c, method)()
	q := h.JobStream()
	if q == nil {
		return nil, JobError(c, method, "the host that started it has left, or has no stream open for requests from mcpx (a Streamable HTTP session opens one with GET)")
	}
	return l.waitJobHost(ctx, c, method, id, ch, q, nil)
}

// promotion returns what is closed as the call becomes a job, or the job
// if it is one already.
func (l *Link) promotion() (<-chan struct{}, *jobs.Call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.job != nil {
		return nil, l.job
	}
	w := l.waitsLocked()
	if w.promoted == nil {
		w.promoted = make(chan struct{})
	}
	return w.promoted, nil
}

// linkWaits is what a call's questions share: made with its first.
type linkWaits struct {
	promoted chan struct{} // closed as the call becomes a job (nil: none waits for it)
	// Of the job's questions that wait for its host: their methods, in
	// the order asked; the progress the job had before the first (and
	// whether it had any), and the one mcpx set in its place.
	methods []string
	before  jobs.Progress
	moved   bool
	shown   jobs.Progress
}

func (l *Link) waitsLocked() *linkWaits {
	if l.waits == nil {
		l.waits = &linkWaits{}
	}
	return l.waits
}

// promotedLocked tells the questions that wait that the call is a job.
func (l *Link) promotedLocked() {
	if l.waits != nil && l.waits.promoted != nil {
		close(l.waits.promoted)
		l.waits.promoted = nil
	}
}

// waitingOn makes job c's progress message say it waits for its host to
// answer method, and returns what ends that wait: when the last of the
// job's waiting questions ends, its progress is put back as it was (none,
// if it had none), unless the call moved on meanwhile; while others
// wait, it names the latest of theirs.
func (l *Link) waitingOn(c *jobs.Call, method string) (done func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.waitsLocked()
	if now, moved := c.LastProgress(); len(w.methods) == 0 || !sameProgress(now, w.shown) {
		w.before, w.moved = now, moved
	}
	w.methods = append(w.methods, method)
	w.show(c)
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if i := slices.Index(w.methods, method); i >= 0 {
			w.methods = slices.Delete(w.methods, i, i+1)
		}
		if now, _ := c.LastProgress(); !sameProgress(now, w.shown) {
			return // the call moved on
		}
		switch {
		case len(w.methods) > 0:
			w.show(c)
		case w.moved:
			c.SetProgress(w.before)
		default:
			c.ClearProgress()
		}
	}
}

// show sets c's progress to say it waits for the latest question's answer.
func (w *linkWaits) show(c *jobs.Call) {
	w.shown = w.before
	w.shown.Message = "waiting for its host to answer " + w.methods[len(w.methods)-1]
	c.SetProgress(w.shown)
}

func sameProgress(a, b jobs.Progress) bool {
	return a.Message == b.Message && a.Progress == b.Progress
}
