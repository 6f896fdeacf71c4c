package hostserver

import (
	"mcpx/internal/hostjobs"
)

// asking is who asks of the host's jobs and tasks, decided here, at the
// face: the jobs of the host's principal (jobPrincipal), asked by the
// host's principal with its client's name, under that principal's policy
// (relay.Policy). What it may do to each job that policy decides in hostjobs
// (hostjobs.Asking: principal.Policy.Decide's ReadJob and CancelJob).
func (req *request) asking() hostjobs.Asking {
	hs := req.session()
	who := hs.who.WithClient(clientName(hs, req))
	return hostjobs.Asking{Jobs: hs.srv.opts.Jobs, Owner: hs.jobPrincipal(), Who: who, Policy: hs.srv.relay.Policy(who)}
}
