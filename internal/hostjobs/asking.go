package hostjobs

import (
	"context"

	"mcpx/internal/jobs"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// Asking is who asks of a host's jobs and tasks, as its session decided
// at the face, handed to the handler with the request: the manager, whom
// the host's jobs belong to (Owner), the principal asking (Who, with its
// client's name) and its policy. What it may do to each job its policy
// decides here, once (Decide's ReadJob and CancelJob, the decision of
// every face): a stdio host shares the local user's principal with the
// CLI, and the hosts of the default token share one, so a filtered host
// must not get the result of a job of a tool it may not call. A job it
// may not see reads as one that does not exist ("no job has this id", as
// an unknown id does), so that the answer says nothing of the job, its
// tool or its server. The job of a script (mcpx_exec, no server) is seen
// by a host with a filter only if the script ran under that same filter
// (mcpx.hosts.NAME.tools): the tools a script called are not kept, and a
// script of the local user's CLI, or of another host, may have called
// any (jobs.Target).
type Asking struct {
	Jobs   *jobs.Manager
	Owner  string
	Who    principal.Principal
	Policy principal.Policy
}

// Read returns the job id of Owner's if the policy lets Who do op
// (ReadJob, CancelJob) on it.
func (a Asking) Read(ctx context.Context, op principal.Op, id string) (*store.Job, error) {
	j, err := a.Jobs.Get(ctx, a.Owner, id)
	if err != nil {
		return nil, err
	}
	if a.Policy.Decide(op, jobs.Target(j)) != nil {
		return nil, hiddenJob(id)
	}
	return j, nil
}

// MayRead returns nil if Who may do op on Owner's job id, else the error
// Read returns. It reads no job for a host without a tool filter: its
// policy allows it every job of Owner's, which the operation on the job
// reads for Owner anyway (and says so if it is another's).
func (a Asking) MayRead(ctx context.Context, op principal.Op, id string) error {
	if f, _ := a.Policy.Tools(); f == nil {
		return nil
	}
	_, err := a.Read(ctx, op, id)
	return err
}

// List returns up to limit of Owner's jobs that Who may see, newest
// first: a filter, which records no refusal (Read decides one read).
func (a Asking) List(ctx context.Context, limit int) ([]*store.Job, error) {
	if f, _ := a.Policy.Tools(); f == nil {
		return a.Jobs.List(ctx, a.Owner, limit)
	}
	// Read more until limit are seen, or there are no more.
	for n := limit; ; n *= 2 {
		all, err := a.Jobs.List(ctx, a.Owner, n)
		if err != nil {
			return nil, err
		}
		seen := make([]*store.Job, 0, min(len(all), limit))
		for _, j := range all {
			if len(seen) < limit && a.Policy.Allows(principal.ReadJob, jobs.Target(j)) {
				seen = append(seen, j)
			}
		}
		if len(seen) == limit || len(all) < n {
			return seen, nil
		}
	}
}

// Cancel cancels Owner's job id, naming Who and why.
func (a Asking) Cancel(ctx context.Context, id, why string) (*store.Job, error) {
	return a.Jobs.CancelJob(ctx, a.Owner, id, a.Who, why)
}

// hiddenJob is what a host is told of a job it may not see.
func hiddenJob(id string) error {
	return &store.IDError{ID: id, Err: store.ErrUnknown}
}
