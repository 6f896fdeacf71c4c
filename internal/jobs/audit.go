package jobs

import (
	"time"

	"mcpx/internal/audit"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
	"mcpx/internal/store"
)

// jobStartKind is how a job's start is recorded: started as one, or
// promoted from a call its host's timer would have ended.
func jobStartKind(s Spec) audit.Kind {
	if s.started {
		return audit.KindJobStart
	}
	return audit.KindJobPromote
}

// record queues a record of c's job id (a no-op with no audit log).
func (m *Manager) record(c *Call, kind audit.Kind, id, outcome, detail string, took *time.Duration) {
	if m.opts.Audit == nil {
		return
	}
	r := audit.Record{Kind: kind, Server: c.spec.Server, Tool: c.spec.Tool, Job: id, Outcome: outcome, Detail: detail}
	if !c.spec.Who.IsZero() {
		r.Who(c.spec.Who)
	} else {
		r.Principal, r.Face = c.spec.Principal, audit.FaceJob
	}
	if took != nil {
		r.DurationMS = took.Milliseconds()
	}
	m.opts.Audit.Add(r)
}

// recordCancel records a cancel of job j by the principal by, in mcpx's
// words who ("mcpx_job_cancel", "mcpx jobs cancel"). The record names
// the canceller; the owner, when another, is in its detail.
func (m *Manager) recordCancel(j *store.Job, by principal.Principal, who string) {
	if m.opts.Audit == nil {
		return
	}
	r := audit.Record{Kind: audit.KindJobCancel, Principal: j.Principal, Server: j.Server, Tool: j.Tool,
		Job: j.ID, Outcome: string(store.Cancelled), Detail: who}
	if !by.IsZero() {
		r.Who(by)
		if by.ID() != j.Principal {
			r.Detail = who + ", of " + j.Principal + "'s job"
		}
	}
	m.opts.Audit.Add(r)
}

// causeDetail is mcpx's own words on how a job's call ended, when
// someone or something gave up on it; "" otherwise (an upstream's error
// message may echo the arguments).
func causeDetail(err error) string {
	if c, ok := relay.CauseOf(err); ok {
		return c.Error()
	}
	return ""
}

// SetAudit makes l the manager's audit log. It is called before Run.
func (m *Manager) SetAudit(l *audit.Log) { m.opts.Audit = l }
