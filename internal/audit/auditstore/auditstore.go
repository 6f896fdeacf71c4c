// Package auditstore keeps the audit log in the job store's audit table
// (SQLite or PostgreSQL): the sink that writes it, the reading of its
// rows, and the pruning that bounds it. It is apart from package audit so
// that the core, which records, never reaches the store.
package auditstore

import (
	"context"
	"log/slog"
	"time"

	"mcpx/internal/audit"
	"mcpx/internal/store"
)

// Sink is a sink of the store's audit table.
type Sink struct{ st store.Audit }

// NewSink is the sink writing to st's audit table.
func NewSink(st store.Audit) *Sink { return &Sink{st: st} }

func (s *Sink) Name() string { return "the store's audit table" }

func (s *Sink) Write(ctx context.Context, recs []audit.Record) error {
	rows := make([]store.AuditRow, len(recs))
	for i, r := range recs {
		rows[i] = store.AuditRow{Time: r.Time, Kind: string(r.Kind), Principal: r.Principal, Name: r.Name, Groups: r.Groups,
			Host: r.Host, Face: r.Face, Server: r.Server, Tool: r.Tool, Action: r.Action, Outcome: r.Outcome, Detail: r.Detail,
			DurationMS: r.DurationMS, Job: r.Job, Replica: r.Replica, ArgsSHA256: r.ArgsSHA256}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return s.st.AppendAudit(ctx, rows)
}

// FromRow is the record a row of the store's table keeps.
func FromRow(r store.AuditRow) audit.Record {
	return audit.Record{Time: r.Time, Kind: audit.Kind(r.Kind), Principal: r.Principal, Name: r.Name, Groups: r.Groups, Host: r.Host,
		Face: r.Face, Server: r.Server, Tool: r.Tool, Action: r.Action, Outcome: r.Outcome, Detail: r.Detail,
		DurationMS: r.DurationMS, Job: r.Job, Replica: r.Replica, ArgsSHA256: r.ArgsSHA256}
}

// Prune deletes, every interval until ctx ends, the rows of st's audit
// table older than maxAge and beyond the newest maxRows (0: no bound by
// that measure), once at the start too. Failures are logged to log.
func Prune(ctx context.Context, log *slog.Logger, st store.Audit, maxAge time.Duration, maxRows int, every time.Duration) error {
	if maxAge <= 0 && maxRows <= 0 {
		return nil
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		var before time.Time
		if maxAge > 0 {
			before = time.Now().Add(-maxAge)
		}
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		n, err := st.PruneAudit(pctx, before, maxRows)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("pruning the audit log", "err", err)
		case n > 0:
			log.Info("pruned the audit log", "rows", n)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil
		}
	}
}
