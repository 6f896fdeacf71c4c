package ui

import (
	"errors"
	"io/fs"
	"net/http"

	"mcpx/internal/principal"
)

// Who uses the live view is the principal its link was minted for (the
// local API mints links for the local user alone: PathUILink is an
// Operate route), and its session acts for that principal; what it may
// do is that principal's policy's (principal.Policy.Decide), asked by
// every route: were the session anyone else's, the view would show and
// do nothing.

// route is one route of the live view and the decision that admits it.
type route struct {
	pattern string
	h       http.Handler
	// op is what the session's principal's policy decides: ReadStatus
	// and Operate before h runs; CancelCall and CancelJob in the
	// daemon's operation h calls, which knows whose call or job the
	// request names (the request's context carries the principal). The
	// zero op: no decision, for public routes only.
	op principal.Op
	// public routes are served without a session: the page, its script
	// and style, which hold no data; and the trade of a link for a
	// session, which decides Operate for the link's principal itself.
	public bool
}

// routes is the live view's route table; NewView serves these and
// nothing else.
func (v *View) routes() []route {
	static, _ := fs.Sub(assets, "assets")
	return []route{
		{pattern: "GET /ui/", public: true, h: http.StripPrefix("/ui/", http.FileServerFS(static))},
		{pattern: "POST /ui/session", public: true, op: principal.Operate, h: http.HandlerFunc(v.login)},
		{pattern: "GET /ui/state", op: principal.ReadStatus, h: http.HandlerFunc(v.state)},
		{pattern: "GET /ui/events", op: principal.ReadStatus, h: http.HandlerFunc(v.events)},
		{pattern: "POST /ui/calls/{id}/cancel", op: principal.CancelCall, h: v.action(v.cancel)},
		{pattern: "POST /ui/servers/{name}/restart", op: principal.Operate, h: v.action(v.restart)},
		{pattern: "POST /ui/jobs/{id}/cancel", op: principal.CancelJob, h: v.action(v.cancelJob)},
	}
}

// decided serves rt: a public route as it is; any other only with a
// session key of the view's, the session's principal in the request's
// context, and, for an op that names no call or job, only if the
// principal's policy allows it.
func (v *View) decided(rt route) http.Handler {
	if rt.public {
		return rt.h
	}
	if rt.op == 0 {
		panic("ui: route " + rt.pattern + " has no policy decision")
	}
	first := rt.op == principal.ReadStatus || rt.op == principal.Operate
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who, ok := v.keys.sessionOf(r)
		if !ok {
			http.Error(w, "forbidden: open the live view with the link `mcpx ui` prints", http.StatusForbidden)
			return
		}
		if first {
			if err := v.opts.Policy(who).Decide(rt.op, principal.Target{}); err != nil {
				refuse(w, err)
				return
			}
		}
		rt.h.ServeHTTP(w, r.WithContext(principal.NewContext(r.Context(), who)))
	})
}

// refuse answers a policy's refusal: 404 for what is another
// principal's, else 403.
func refuse(w http.ResponseWriter, err error) {
	status := http.StatusForbidden
	var r *principal.Refusal
	if errors.As(err, &r) && r.Hidden {
		status = http.StatusNotFound
	}
	http.Error(w, err.Error(), status)
}
