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
	"mcpx/internal/store"
)

// The local API is the local user's: it reads and cancels every
// principal's jobs.

func (h *Handler) serveJobs(w http.ResponseWriter, r *http.Request) error {
	m, err := h.jobs()
	if err != nil {
		return err
	}
	list, err := m.List(r.Context(), "", 200)
	if err != nil {
		return err
	}
	out := apitype.Jobs{Jobs: []apitype.Job{}}
	for _, j := range list {
		out.Jobs = append(out.Jobs, wireJob(j))
	}
	return writeJSON(w, out)
}

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
	j, err := m.Wait(r.Context(), "", r.PathValue("id"), wait)
	if err != nil {
		return jobError(err)
	}
	return writeJSON(w, wireJob(j))
}

func (h *Handler) serveJobCancel(w http.ResponseWriter, r *http.Request) error {
	j, err := h.CancelJob(r.Context(), r.PathValue("id"), "mcpx jobs cancel")
	if err != nil {
		return err
	}
	return writeJSON(w, wireJob(j))
}

// CancelJob cancels any principal's job id on behalf of who (the CLI's
// "mcpx jobs cancel", the live view's button): the operation of POST
// PathJobCancel. An unknown or expired id is a 404.
func (h *Handler) CancelJob(ctx context.Context, id, who string) (*store.Job, error) {
	m, err := h.jobs()
	if err != nil {
		return nil, err
	}
	j, err := m.CancelJob(ctx, "", id, who)
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

func jobError(err error) error {
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
	return out
}

// runningJobs returns the daemon's running jobs, for status.
func (h *Handler) runningJobs() []apitype.Job {
	if h.opts.Jobs == nil {
		return nil
	}
	var out []apitype.Job
	for _, l := range h.opts.Jobs.Live() {
		j := apitype.Job{ID: l.ID, Principal: l.Principal, Server: l.Server, Tool: l.Tool, Status: string(store.Running), Created: l.Started}
		if l.Progress != nil {
			j.Progress = &apitype.Progress{Progress: l.Progress.Progress, Total: l.Progress.Total, Message: l.Progress.Message}
		}
		out = append(out, j)
	}
	return out
}

// serveStartJob starts a call in the background, as a job of the local
// user's ("local"), and answers with the job.
func (h *Handler) serveStartJob(w http.ResponseWriter, r *http.Request) error {
	m, err := h.jobs()
	if err != nil {
		return err
	}
	req, server, tool, params, err := h.readCall(r)
	if err != nil {
		return err
	}
	spec := jobs.Spec{
		Principal: jobs.LocalPrincipal, Server: server, Tool: tool, Params: params.Bytes(),
		Key: jobs.Key(server, tool, req.Arguments), Idempotent: jobs.Idempotent(r.Context(), h.relay, server, tool),
	}
	id, err := m.StartRelayed(context.WithoutCancel(r.Context()), h.relay, spec,
		time.Duration(req.IdleTimeoutMs)*time.Millisecond, time.Duration(req.MaxTimeoutMs)*time.Millisecond)
	if err != nil {
		return err
	}
	j, err := m.Get(r.Context(), "", id)
	if err != nil {
		return err
	}
	return writeJSON(w, wireJob(j))
}
