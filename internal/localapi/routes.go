package localapi

import (
	"errors"
	"fmt"
	"net/http"

	"mcpx/internal/apitype"
	"mcpx/internal/oauth"
	"mcpx/internal/principal"
)

// route is one route of the local API.
type route struct {
	method, path string
	fn           func(http.ResponseWriter, *http.Request) error
	// op is the operation the route performs, which the principal's
	// policy decides (New refuses a route without one): Operate is
	// decided before fn runs; the others depend on what the request
	// names (a tool, a job, a call), and fn asks the policy about it
	// (ReadStatus: fn narrows the status to the principal's part).
	op principal.Op
	// v1 routes are the stable API, served on the HTTP listener too (V1)
	// and described by docs/api/v1.json; in and out are their request
	// body's and their answer's wire types (nil: none), which the
	// document's test checks it against.
	v1      bool
	in, out any
	ndjson  bool // the answer is a stream of out, one a line
	// page is the handler of a route a person's browser reaches, with no
	// token (SignInPages): the principal is the one its sign-in state
	// names (signin.go). Its response writer is its own.
	page func(http.ResponseWriter, *http.Request) error
}

// routes is the local API's route table.
func (h *Handler) routes() []route {
	return []route{
		{method: "GET", path: apitype.PathStatus, op: principal.ReadStatus, fn: h.serveStatus},
		{method: "GET", path: apitype.PathTools, op: principal.CallTool, fn: h.serveTools},
		{method: "POST", path: apitype.PathCall, op: principal.CallTool, fn: h.serveCall},
		{method: "POST", path: apitype.PathExec, op: principal.CallTool, fn: h.serveExec},
		{method: "POST", path: apitype.PathCancel, op: principal.CancelCall, fn: h.serveCancel},
		{method: "POST", path: apitype.PathShutdown, op: principal.Operate, fn: h.serveShutdown},
		{method: "POST", path: apitype.PathReload, op: principal.Operate, fn: h.serveReload},
		{method: "POST", path: apitype.PathRestart, op: principal.Operate, fn: h.serveRestart},
		{method: "POST", path: apitype.PathUILink, op: principal.Operate, fn: h.serveUILink},
		{method: "GET", path: apitype.PathStdio, op: principal.Operate, fn: h.serveStdio},
		{method: "GET", path: apitype.PathJobs, op: principal.ReadJob, fn: h.serveJobs},
		{method: "POST", path: apitype.PathJobs, op: principal.StartJob, fn: h.serveStartJob},
		{method: "GET", path: apitype.PathJob, op: principal.ReadJob, fn: h.serveJob},
		{method: "POST", path: apitype.PathJobCancel, op: principal.CancelJob, fn: h.serveJobCancel},

		{method: "GET", path: apitype.PathV1Status, op: principal.ReadStatus, fn: h.serveStatus, v1: true, out: apitype.Status{}},
		{method: "GET", path: apitype.PathV1Tools, op: principal.CallTool, fn: h.serveTools, v1: true, out: apitype.Tools{}},
		{method: "POST", path: apitype.PathV1Call, op: principal.CallTool, fn: h.serveCall, v1: true, in: apitype.CallRequest{}, out: apitype.CallEvent{}, ndjson: true},
		{method: "POST", path: apitype.PathV1Exec, op: principal.CallTool, fn: h.serveExec, v1: true, in: apitype.ExecRequest{}, out: apitype.CallEvent{}, ndjson: true},
		{method: "POST", path: apitype.PathV1Cancel, op: principal.CancelCall, fn: h.serveV1Cancel, v1: true, in: apitype.CancelCall{}},
		{method: "GET", path: apitype.PathV1Jobs, op: principal.ReadJob, fn: h.serveJobs, v1: true, out: apitype.Jobs{}},
		{method: "POST", path: apitype.PathV1Jobs, op: principal.StartJob, fn: h.serveStartJob, v1: true, in: apitype.CallRequest{}, out: apitype.Job{}},
		{method: "GET", path: apitype.PathV1Job, op: principal.ReadJob, fn: h.serveJob, v1: true, out: apitype.Job{}},
		{method: "GET", path: apitype.PathV1JobWait, op: principal.ReadJob, fn: h.serveJobWait, v1: true, out: apitype.JobEvent{}, ndjson: true},
		{method: "POST", path: apitype.PathV1JobCancel, op: principal.CancelJob, fn: h.serveV1JobCancel, v1: true, in: apitype.CancelJob{}, out: apitype.Job{}},
		{method: "GET", path: apitype.PathV1Audit, op: principal.ReadAudit, fn: h.serveAudit, v1: true, out: apitype.AuditRecords{}},
		{method: "POST", path: apitype.PathV1UILink, op: principal.Operate, fn: h.serveUILink, v1: true, out: apitype.UILink{}},
		{method: "DELETE", path: apitype.PathV1SignIn, op: principal.RevokeSignIn, fn: h.serveRevokeSignIn, v1: true, out: apitype.SignOut{}},

		// Reached by a person's browser, authenticated by the sign-in's
		// state (signin.go), on the HTTP listener alone.
		{method: "GET", path: oauth.StartPath, op: principal.SignIn, page: h.signInStart},
		{method: "GET", path: oauth.CallbackPath, op: principal.SignIn, page: h.signInCallback},
	}
}

// V1 serves the /v1 routes alone, each request first passing check (the
// HTTP listener's Host, Origin and token rules), which returns the
// request's principal (the token's holder), or the status and reason to
// refuse it with and the WWW-Authenticate challenge to send ("" for
// none). Refusals are JSON errors.
func (h *Handler) V1(check func(*http.Request) (who principal.Principal, status int, msg, challenge string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(apitype.HeaderVersion, h.opts.Version)
		who, status, msg, challenge := check(r)
		if status != 0 {
			if challenge != "" {
				w.Header().Set("WWW-Authenticate", challenge)
			}
			writeError(w, status, msg)
			return
		}
		h.v1.ServeHTTP(w, r.WithContext(principal.NewContext(r.Context(), who)))
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
	if err := h.cancelCall(h.policy(r), req.CallID, req.Reason); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
