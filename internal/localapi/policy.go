package localapi

import (
	"errors"
	"net/http"

	"mcpx/internal/apitype"
	"mcpx/internal/principal"
)

// Who is asking was decided by the face (ServeHTTP: the socket's peer,
// the local user; V1 on the HTTP listener: the token's holder) and comes
// in the request's context; what they may do is the relay's policy's
// (principal.Policy.Decide), asked here, never decided here.

// policy is the policy of the principal r acts for.
func (h *Handler) policy(r *http.Request) principal.Policy {
	return h.relay.Policy(principal.From(r.Context()))
}

// refusal turns a policy's refusal into the error the API answers: 404
// for another principal's job or call (as for one that does not exist),
// else 403.
func refusal(err error) error {
	var r *principal.Refusal
	if errors.As(err, &r) && r.Hidden {
		return statusErr(http.StatusNotFound, err)
	}
	return statusErr(http.StatusForbidden, err)
}

// statusFor narrows st, the whole status, to what pol may read of it:
// all of it for the local user; for any other principal its own calls
// (mine reports which, by registry id) and running jobs (those whose
// tool it may still use), the daemon's version and start, and nothing
// that names another principal, a host, a file or a replica. The
// upstreams are listed only to a principal without a tool filter. job
// returns what the policy decides a running job by.
func statusFor(st apitype.Status, pol principal.Policy, mine func(callID uint64) bool, job func(id string) principal.Target) apitype.Status {
	if pol.Allows(principal.ReadStatus, principal.Target{}) {
		return st
	}
	out := apitype.Status{
		PID: st.PID, Version: st.Version, Started: st.Started, HTTP: st.HTTP,
		Calls: []apitype.InFlightCall{}, Connected: []apitype.ConnectedHost{},
	}
	for _, c := range st.Calls {
		if mine(c.ID) {
			out.Calls = append(out.Calls, c)
		}
	}
	for _, j := range st.Jobs {
		if pol.Allows(principal.ReadJob, job(j.ID)) {
			out.Jobs = append(out.Jobs, j)
		}
	}
	if unfiltered(pol) {
		for _, u := range st.Upstreams {
			out.Upstreams = append(out.Upstreams, apitype.Upstream{Name: u.Name, State: u.State, Protocol: u.Protocol, ServerName: u.ServerName})
		}
	}
	return out
}

// Decided serves next only to a principal (in the request's context, as
// its face decided) whose policy allows op, which depends on no target
// (the metrics page behind the HTTP listener's token); others get a
// plain-text 403.
func (h *Handler) Decided(op principal.Op, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.policy(r).Decide(op, principal.Target{}); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// startRefusal is why pol's principal may not start a job of server's
// tool (named name; "" server: a script), as the API answers it (403),
// nil if it may. Every route that starts a job asks it first.
func startRefusal(pol principal.Policy, name, server, tool string) error {
	if err := pol.Decide(principal.StartJob, principal.Target{Name: name, Server: server, Tool: tool}); err != nil {
		return refusal(err)
	}
	return nil
}
