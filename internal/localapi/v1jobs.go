package localapi

import (
	"fmt"
	"net/http"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// jobPoll is how often a job's wait stream looks for new progress: a
// job's progress has no subscription, and the end is seen at once.
const jobPoll = 250 * time.Millisecond

// serveJobWait streams a job's progress until it ends, then the job.
// The client closing the stream stops the wait, not the job.
func (h *Handler) serveJobWait(w http.ResponseWriter, r *http.Request) error {
	m, err := h.jobs()
	if err != nil {
		return err
	}
	pol, id := h.policy(r), r.PathValue("id")
	j, err := readJob(r.Context(), m, pol, principal.ReadJob, id)
	if err != nil {
		return err
	}
	emit := ndjson[apitype.JobEvent](w)
	var last *apitype.Progress
	for !j.Status.Final() {
		if p := h.jobProgress(j); p != nil && (last == nil || *p != *last) {
			if emit(apitype.JobEvent{Type: "progress", Progress: p}) != nil {
				return nil // the client has gone
			}
			last = p
		}
		if j, err = m.Wait(r.Context(), pol.JobOwner(), id, jobPoll); err != nil {
			if r.Context().Err() != nil {
				return nil
			}
			return jobError(err)
		}
	}
	wj := wireJob(j)
	_ = emit(apitype.JobEvent{Type: "end", Job: &wj})
	return nil
}

// jobProgress is a running job's newest progress: the live one when this
// daemon runs it, else what the store has.
func (h *Handler) jobProgress(j *store.Job) *apitype.Progress {
	for _, l := range h.opts.Jobs.Live() {
		if l.ID == j.ID && l.Progress != nil {
			return &apitype.Progress{Progress: l.Progress.Progress, Total: l.Progress.Total, Message: l.Progress.Message}
		}
	}
	return wireJob(j).Progress
}

func (h *Handler) serveV1JobCancel(w http.ResponseWriter, r *http.Request) error {
	var req apitype.CancelJob
	if r.ContentLength != 0 {
		if err := decodeBody(r, &req); err != nil {
			return statusErr(http.StatusBadRequest, fmt.Errorf("reading cancel request: %w", err))
		}
	}
	who := clientName(req.Client)
	if who == "" {
		who = "the local API"
	}
	j, err := h.cancelJob(r.Context(), h.policy(r), r.PathValue("id"), who)
	if err != nil {
		return err
	}
	return writeJSON(w, wireJob(j))
}
