package localapi

import (
	"mcpx/internal/apitype"
	"mcpx/internal/jobs"
)

// cluster is the replicas sharing the job store, as the manager last read
// them (no store read per status: the live view asks often); nil when
// this daemon is no replica.
func (h *Handler) cluster() *apitype.Cluster {
	if h.opts.Jobs == nil {
		return nil
	}
	c := h.opts.Jobs.Cluster()
	if c == nil {
		return nil
	}
	return apiCluster(c)
}

func apiCluster(c *jobs.Cluster) *apitype.Cluster {
	out := &apitype.Cluster{Self: c.Self, LeaseTermMs: c.LeaseTerm.Milliseconds(), Read: c.Read, Replicas: []apitype.Replica{}}
	if c.Err != nil {
		out.Error = c.Err.Error()
	}
	for _, r := range c.Replicas {
		seen, lease := c.Seen(r)
		out.Replicas = append(out.Replicas, apitype.Replica{
			Owner: r.Owner, Address: r.Address, Host: r.Host, PID: r.PID, Version: r.Version, Started: r.Started,
			Seen: seen, Live: c.Live(r), Jobs: r.Jobs, LeaseUntil: lease,
		})
	}
	return out
}
