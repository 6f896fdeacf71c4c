package localapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/jobs"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// A job is read, waited on, listed and cancelled by its principal only
// (the local user, on the socket, any principal's), and only while its
// tool is allowed to the reader: the policy decides each (ReadJob,
// CancelJob). Another principal's job answers as an unknown one does.

func (h *Handler) serveJobs(w http.ResponseWriter, r *http.Request) error {
	m, err := h.jobs()
	if err != nil {
		return err
	}
	pol := h.policy(r)
	list, err := m.List(r.Context(), pol.JobOwner(), 200)
	if err != nil {
		return err
	}
	out := apitype.Jobs{Jobs: []apitype.Job{}}
	for _, j := range list {
		if pol.Allows(principal.ReadJob, jobTarget(j)) {
			out.Jobs = append(out.Jobs, wireJob(j))
		}
	}
	return writeJSON(w, out)
}

// readJob reads job id for an operation of pol's (ReadJob, CancelJob)
// and decides it: 404 for another principal's, 403 for one whose tool
// pol may no longer use.
func readJob(ctx context.Context, m *jobs.Manager, pol principal.Policy, op principal.Op, id string) (*store.Job, error) {
	j, err := m.Get(ctx, pol.JobOwner(), id)
	if err != nil {
		return nil, jobError(err)
	}
	if err := pol.Decide(op, jobTarget(j)); err != nil {
		return nil, refusal(err)
	}
	return j, nil
}

func jobTarget(j *store.Job) principal.Target { return jobs.Target(j) }

func (h *Handler) serveJob(w http.ResponseWriter, r *http.Request) error {
	m, err := h.jobs()
	if err != nil {
		return err
	}
	var wait time.Duration
	if s := r.URL.Query().Get("wait"); s != "" {
		secs, err := strconv.ParseFloat(s, 64)
		if err != nil || secs < 0 || secs > 3600 {
			return statusErr(http.StatusBadRequest, errors.New("wait must be a number of seconds from 0 to 3600"))
		}
		wait = time.Duration(secs * float64(time.Second))
	}
	pol, id := h.policy(r), r.PathValue("id")
	j, err := readJob(r.Context(), m, pol, principal.ReadJob, id)
	if err != nil {
		return err
	}
	if wait > 0 && !j.Status.Final() {
		if j, err = m.Wait(r.Context(), pol.JobOwner(), id, wait); err != nil {
			return jobError(err)
		}
	}
	return writeJSON(w, wireJob(j))
}

func (h *Handler) serveJobCancel(w http.ResponseWriter, r *http.Request) error {
	j, err := h.cancelJob(r.Context(), h.policy(r), r.PathValue("id"), "mcpx jobs cancel")
	if err != nil {
		return err
	}
	return writeJSON(w, wireJob(j))
}

// CancelJob cancels job id for the principal ctx carries (the live
// view's button, for its session's principal), on behalf of who, as
// POST PathJobCancel does. An unknown or expired id, or another
// principal's, is a 404.
func (h *Handler) CancelJob(ctx context.Context, id, who string) (*store.Job, error) {
	return h.cancelJob(ctx, h.relay.Policy(principal.From(ctx)), id, who)
}

// cancelJob cancels job id if pol may, on behalf of who.
func (h *Handler) cancelJob(ctx context.Context, pol principal.Policy, id, who string) (*store.Job, error) {
	m, err := h.jobs()
	if err != nil {
		return nil, err
	}
	if _, err := readJob(ctx, m, pol, principal.CancelJob, id); err != nil {
		return nil, err
	}
	j, err := m.CancelJob(ctx, pol.JobOwner(), id, principal.From(ctx), who)
	if err != nil {
		return nil, jobError(err)
	}
	return j, nil
}

func (h *Handler) jobs() (*jobs.Manager, error) {
	if h.opts.Jobs == nil {
		return nil, statusErr(http.StatusNotFound, errors.New("this daemon keeps no jobs (its job store could not be opened; see its log)"))
	}
	return h.opts.Jobs, nil
}

// jobError is the API's answer to a job store's error: 404 for an
// unknown or expired id, and for another principal's, which it answers
// as an unknown one (ids do not tell who else is there).
func jobError(err error) error {
	var idErr *store.IDError
	if errors.As(err, &idErr) && errors.Is(err, store.ErrForeign) {
		return statusErr(http.StatusNotFound, &store.IDError{ID: idErr.ID, Err: store.ErrUnknown})
	}
	if errors.Is(err, store.ErrUnknown) || errors.Is(err, store.ErrExpired) {
		return statusErr(http.StatusNotFound, err)
	}
	return err
}

func wireJob(j *store.Job) apitype.Job {
	out := apitype.Job{
		ID: j.ID, Principal: j.Principal, Server: j.Server, Tool: j.Tool, Status: string(j.Status), Attempt: j.Attempt,
		Error: j.Error, Note: j.Note, Created: j.Created, Finished: j.Finished,
	}
	if j.Status == store.Completed {
		out.Result = j.Result // a failed job's holds its error, which Error says
	}
	if len(j.Progress) > 0 {
		var p apitype.Progress
		if json.Unmarshal(j.Progress, &p) == nil {
			out.Progress = &p
		}
	}
	if l := j.Late; l != nil {
		out.Late = &apitype.LateEnd{Status: string(l.Status), Result: l.Result, Error: l.Error, At: l.At}
	}
	return out
}

// runningJobs returns the daemon's running jobs, for status; targets, if
// not nil, gains what the policy decides each by.
func (h *Handler) runningJobs(targets map[string]principal.Target) []apitype.Job {
	if h.opts.Jobs == nil {
		return nil
	}
	var out []apitype.Job
	for _, l := range h.opts.Jobs.Live() {
		j := apitype.Job{ID: l.ID, Principal: l.Principal, Server: l.Server, Tool: l.Tool, Status: string(store.Running), Created: l.Started}
		if l.Progress != nil {
			j.Progress = &apitype.Progress{Progress: l.Progress.Progress, Total: l.Progress.Total, Message: l.Progress.Message}
		}
		if targets != nil {
			targets[l.ID] = l.Target()
		}
		out = append(out, j)
	}
	return out
}

// serveStartJob starts a call in the background, as a job of the
// caller's principal ("local" for the local user), and answers with the
// job.
func (h *Handler) serveStartJob(w http.ResponseWriter, r *http.Request) error {
	m, err := h.jobs()
	if err != nil {
		return err
	}
	req, server, tool, params, err := h.readCall(r)
	if err != nil {
		return err
	}
	if err := startRefusal(h.policy(r), req.Tool, server, tool); err != nil {
		return err
	}
	who := principal.From(r.Context())
	owner := who.ID()
	spec := jobs.Spec{
		Principal: owner, Server: server, Tool: tool, Params: params.Bytes(), Who: who,
		Key: jobs.Key(server, tool, req.Arguments), Idempotent: jobs.Idempotent(r.Context(), h.relay, server, tool),
	}
	// A running job of the same principal and call is the answer instead
	// of another.
	c := m.Attach(owner, spec.Key)
	if c == nil {
		c, err = m.Start(context.WithoutCancel(r.Context()), spec, jobs.Relayed(h.relay, params,
			time.Duration(req.IdleTimeoutMs)*time.Millisecond, time.Duration(req.MaxTimeoutMs)*time.Millisecond))
		if err != nil {
			return err
		}
	}
	j, err := m.Get(r.Context(), owner, c.ID())
	if err != nil {
		return err
	}
	return writeJSON(w, wireJob(j))
}
