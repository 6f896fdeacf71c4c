package relay

import (
	"time"

	"mcpx/internal/audit"
)

// SetAudit makes l the relay's audit log: each tool call is recorded as
// it ends, and the policies Policy returns record their refusals (and
// refuse tool calls while l fails closed). It is called before the
// relay serves any call (the daemon wires it), once.
func (r *Relay) SetAudit(l *audit.Log) { r.audit = l }

// Audit returns the relay's audit log (nil: none).
func (r *Relay) Audit() *audit.Log { return r.audit }

// AuditNamer is a DeadlineHook whose caller may have made the call
// something the audit log names, read as the call ends: the record's Job
// ("" while none).
type AuditNamer interface {
	AuditJob() string
}

// callRecord starts c's record as it starts: who, what, and a copy of
// its arguments (hashed by the log's writer, off the call's path).
func callRecord(c *Call) audit.Record {
	rec := audit.Record{Kind: audit.KindCall, Server: c.Server, Tool: c.Tool, Job: c.Job}
	if !c.Who.IsZero() {
		rec.Who(c.Who)
	} else {
		rec.Principal, rec.Face = c.Principal, audit.FaceJob
	}
	var args []byte
	if c.Params != nil {
		args, _ = c.Params.Get("arguments")
	}
	rec.SetArgs(args)
	return rec
}

// recordCall ends a call's record with how it ended and queues it. Only
// mcpx's own words on the end are kept (a cause), never the upstream's
// message, which may echo the arguments.
func (r *Relay) recordCall(rec *audit.Record, h DeadlineHook, outcome Outcome, took time.Duration, err error) {
	rec.Outcome, rec.DurationMS = string(outcome), took.Milliseconds()
	if n, ok := h.(AuditNamer); ok && rec.Job == "" {
		rec.Job = n.AuditJob()
	}
	if c, ok := CauseOf(err); ok {
		rec.Detail = c.Error()
	}
	r.audit.Add(*rec)
}
