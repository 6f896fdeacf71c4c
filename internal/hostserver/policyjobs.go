package hostserver

import (
	"context"

	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// A host reads, waits on, lists and cancels the jobs and tasks of its
// principal (jobPrincipal) only, and of those only the ones its tool
// filter lets it see, as its policy decides (hostFilter.readsJob:
// principal.Policy.Decide's ReadJob and CancelJob, the decision of every
// face): a stdio host shares the local user's principal with the CLI,
// and the hosts of the default token share one, so a filtered host must
// not get the result of a job of a tool it may not call. A job it may not see reads as one that does not exist:
// "no job has this id", as an unknown id does, so that the answer says
// nothing of the job, its tool or its server.

// readJob returns the job id of the host's principal, if its policy lets
// it do op (ReadJob, CancelJob) on the job.
func (hs *hostSession) readJob(ctx context.Context, req *request, op principal.Op, id string) (*store.Job, error) {
	j, err := hs.srv.opts.Jobs.Get(ctx, hs.jobPrincipal(), id)
	if err != nil {
		return nil, err
	}
	if !hs.toolFilter(req).readsJob(op, j) {
		return nil, hiddenJob(id)
	}
	return j, nil
}

// mayReadJob returns nil if the host may do op on its principal's job
// id; else the error readJob returns. It reads no job for a host without
// a filter: its policy allows it every job of its principal, which the
// operation on the job reads for that principal anyway (and says so if
// it is another's).
func (hs *hostSession) mayReadJob(ctx context.Context, req *request, op principal.Op, id string) error {
	if hs.toolFilter(req).f == nil {
		return nil
	}
	_, err := hs.readJob(ctx, req, op, id)
	return err
}

// hiddenJob is what a host is told of a job it may not see.
func hiddenJob(id string) error {
	return &store.IDError{ID: id, Err: store.ErrUnknown}
}

// listJobs returns up to limit jobs of the host's principal that it may
// see, newest first.
func (hs *hostSession) listJobs(ctx context.Context, req *request, limit int) ([]*store.Job, error) {
	filter := hs.toolFilter(req)
	if filter.f == nil {
		return hs.srv.opts.Jobs.List(ctx, hs.jobPrincipal(), limit)
	}
	// Read more until limit are seen, or there are no more.
	for n := limit; ; n *= 2 {
		all, err := hs.srv.opts.Jobs.List(ctx, hs.jobPrincipal(), n)
		if err != nil {
			return nil, err
		}
		seen := make([]*store.Job, 0, min(len(all), limit))
		for _, j := range all {
			if len(seen) < limit && filter.sees(j) {
				seen = append(seen, j)
			}
		}
		if len(seen) == limit || len(all) < n {
			return seen, nil
		}
	}
}
