package localapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/audit"
	"mcpx/internal/audit/auditstore"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// defaultAuditLimit is how many records GET PathV1Audit answers with
// when the query names no limit.
const defaultAuditLimit = 100

// serveAudit answers GET PathV1Audit from the store's audit table, for
// the operator alone (the route's ReadAudit, decided before it runs).
func (h *Handler) serveAudit(w http.ResponseWriter, r *http.Request) error {
	if h.opts.AuditStore == nil {
		return statusErr(http.StatusNotFound, errors.New("this daemon keeps no audit log in a store (mcpx.audit, with a job store)"))
	}
	q, err := auditQuery(r)
	if err != nil {
		return statusErr(http.StatusBadRequest, err)
	}
	rows, err := h.opts.AuditStore.QueryAudit(r.Context(), q)
	if err != nil {
		return statusErr(http.StatusServiceUnavailable, err)
	}
	out := apitype.AuditRecords{Records: make([]apitype.AuditRecord, len(rows))}
	for i, row := range rows {
		rec := auditstore.FromRow(row)
		out.Records[i] = apitype.AuditRecord{Time: rec.Time, Kind: string(rec.Kind), Principal: rec.Principal, Name: rec.Name,
			Groups: rec.Groups, Host: rec.Host, Face: rec.Face, Server: rec.Server, Tool: rec.Tool, Action: rec.Action,
			Outcome: rec.Outcome, Detail: rec.Detail, DurationMS: rec.DurationMS, Job: rec.Job, Replica: rec.Replica, ArgsSHA256: rec.ArgsSHA256}
	}
	return writeJSON(w, out)
}

// auditQuery reads GET PathV1Audit's query.
func auditQuery(r *http.Request) (store.AuditQuery, error) {
	v := r.URL.Query()
	q := store.AuditQuery{Principal: v.Get("principal"), Tool: v.Get("tool"), Server: v.Get("server"),
		Outcome: v.Get("outcome"), Kind: v.Get("kind"), Limit: defaultAuditLimit}
	for _, t := range []struct {
		name string
		to   *time.Time
	}{{"since", &q.Since}, {"until", &q.Until}} {
		if s := v.Get(t.name); s != "" {
			at, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return q, fmt.Errorf("%s: want an RFC 3339 time such as 2026-01-02T15:04:05Z, not %q", t.name, s)
			}
			*t.to = at
		}
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return q, fmt.Errorf("limit: want a positive number, not %q", s)
		}
		q.Limit = n
	}
	return q, nil
}

// recordAdmin records an operator's action on the daemon (an Operate
// route), allowed and run; err is how it ended. A host's stdio stream,
// which the route carries, is no action: its calls are recorded.
func (h *Handler) recordAdmin(r *http.Request, rt route, start time.Time, err error) {
	if h.opts.Audit == nil || rt.path == apitype.PathStdio {
		return
	}
	var server string
	if rt.path == apitype.PathRestart {
		server = r.PathValue("name")
	}
	h.recordAction(principal.From(r.Context()), rt.method+" "+rt.path, server, "", start, err)
}

// recordAction records an operator's action (the route it is, or would
// be on /v1) on server, through face ("" for the route itself, "the live
// view"), begun at start; err is how it ended.
func (h *Handler) recordAction(who principal.Principal, action, server, face string, start time.Time, err error) {
	if h.opts.Audit == nil {
		return
	}
	rec := audit.Record{Kind: audit.KindAdmin, Action: action, Server: server, Outcome: "ok", Detail: face,
		DurationMS: time.Since(start).Milliseconds()}
	if err != nil {
		rec.Outcome, rec.Detail = "failed", strings.TrimPrefix(face+": ", ": ")+err.Error()
	}
	rec.Who(who)
	h.opts.Audit.Add(rec)
}

// recordCallCancel records that pol's principal cancelled call id of
// owner's with cause, by /v1 or the live view.
func (h *Handler) recordCallCancel(pol principal.Policy, id uint64, owner string, cause error) {
	if h.opts.Audit == nil {
		return
	}
	rec := audit.Record{Kind: audit.KindCallCancel, Action: "call " + strconv.FormatUint(id, 10), Outcome: "cancelled", Detail: cause.Error()}
	rec.Who(pol.Who())
	if owner != rec.Principal {
		rec.Detail += ", of " + owner + "'s call"
	}
	h.opts.Audit.Add(rec)
}

// recordSignIn records a step of a person's sign-in to server through
// the gateway's pages (action: the page's route), for who, the principal
// its state is bound to; err is how the page ended.
func (h *Handler) recordSignIn(who principal.Principal, action, server string, err error) {
	if h.opts.Audit == nil {
		return
	}
	rec := audit.Record{Kind: audit.KindSignIn, Action: action, Server: server, Outcome: "ok"}
	if err != nil {
		rec.Outcome, rec.Detail = "failed", err.Error()
	}
	rec.Who(who)
	h.opts.Audit.Add(rec)
}

// recordSignOut records that by revoked and forgot owner's sign-in to a
// per-person server; revoked says whether its authorization server
// revoked the tokens too.
func (h *Handler) recordSignOut(by principal.Principal, server, owner string, revoked bool) {
	if h.opts.Audit == nil {
		return
	}
	rec := audit.Record{Kind: audit.KindSignOut, Action: "DELETE " + apitype.PathV1SignIn, Server: server, Outcome: "ok",
		Detail: "forgotten; revoked at the authorization server"}
	if !revoked {
		rec.Detail = "forgotten; not revoked at the authorization server"
	}
	rec.Who(by)
	if owner != rec.Principal {
		rec.Detail += "; " + owner + "'s sign-in"
	}
	h.opts.Audit.Add(rec)
}
