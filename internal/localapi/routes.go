package localapi

import (
	"errors"
	"fmt"
	"net/http"

	"mcpx/internal/apitype"
)

// route is one route of the local API.
type route struct {
	method, path string
	fn           func(http.ResponseWriter, *http.Request) error
	// v1 routes are the stable API, served on the HTTP listener too (V1)
	// and described by docs/api/v1.json; in and out are their request
	// body's and their answer's wire types (nil: none), which the
	// document's test checks it against.
	v1      bool
	in, out any
	ndjson  bool // the answer is a stream of out, one a line
}

// routes is the local API's route table.
func (h *Handler) routes() []route {
	return []route{
		{method: "GET", path: apitype.PathStatus, fn: h.serveStatus},
		{method: "GET", path: apitype.PathTools, fn: h.serveTools},
		{method: "POST", path: apitype.PathCall, fn: h.serveCall},
		{method: "POST", path: apitype.PathExec, fn: h.serveExec},
		{method: "POST", path: apitype.PathCancel, fn: h.serveCancel},
		{method: "POST", path: apitype.PathShutdown, fn: h.serveShutdown},
		{method: "POST", path: apitype.PathReload, fn: h.serveReload},
		{method: "POST", path: apitype.PathRestart, fn: h.serveRestart},
		{method: "POST", path: apitype.PathUILink, fn: h.serveUILink},
		{method: "GET", path: apitype.PathStdio, fn: h.serveStdio},
		{method: "GET", path: apitype.PathJobs, fn: h.serveJobs},
		{method: "POST", path: apitype.PathJobs, fn: h.serveStartJob},
		{method: "GET", path: apitype.PathJob, fn: h.serveJob},
		{method: "POST", path: apitype.PathJobCancel, fn: h.serveJobCancel},

		{method: "GET", path: apitype.PathV1Status, fn: h.serveStatus, v1: true, out: apitype.Status{}},
		{method: "GET", path: apitype.PathV1Tools, fn: h.serveTools, v1: true, out: apitype.Tools{}},
		{method: "POST", path: apitype.PathV1Call, fn: h.serveCall, v1: true, in: apitype.CallRequest{}, out: apitype.CallEvent{}, ndjson: true},
		{method: "POST", path: apitype.PathV1Exec, fn: h.serveExec, v1: true, in: apitype.ExecRequest{}, out: apitype.CallEvent{}, ndjson: true},
		{method: "POST", path: apitype.PathV1Cancel, fn: h.serveV1Cancel, v1: true, in: apitype.CancelCall{}},
		{method: "GET", path: apitype.PathV1Jobs, fn: h.serveJobs, v1: true, out: apitype.Jobs{}},
		{method: "POST", path: apitype.PathV1Jobs, fn: h.serveStartJob, v1: true, in: apitype.CallRequest{}, out: apitype.Job{}},
		{method: "GET", path: apitype.PathV1Job, fn: h.serveJob, v1: true, out: apitype.Job{}},
		{method: "GET", path: apitype.PathV1JobWait, fn: h.serveJobWait, v1: true, out: apitype.JobEvent{}, ndjson: true},
		{method: "POST", path: apitype.PathV1JobCancel, fn: h.serveV1JobCancel, v1: true, in: apitype.CancelJob{}, out: apitype.Job{}},
	}
}

// V1 serves the /v1 routes alone, each request first passing check (the
// HTTP listener's Host, Origin and token rules), which returns the status
// and reason to refuse it with, or 0. Refusals are JSON errors.
func (h *Handler) V1(check func(*http.Request) (int, string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(apitype.HeaderVersion, h.opts.Version)
		if status, msg := check(r); status != 0 {
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="mcpx"`)
			}
			writeError(w, status, msg)
			return
		}
		h.v1.ServeHTTP(w, r)
	})
}

func (h *Handler) serveV1Cancel(w http.ResponseWriter, r *http.Request) error {
	var req apitype.CancelCall
	if err := decodeBody(r, &req); err != nil {
		return statusErr(http.StatusBadRequest, fmt.Errorf("reading cancel request: %w", err))
	}
	if req.CallID == 0 {
		return statusErr(http.StatusBadRequest, errors.New("callId is required"))
	}
	if err := h.Cancel(req.CallID, req.Reason); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
