package audit

import (
	"context"
	"time"

	"mcpx/internal/store"
)

// Store is a sink of the store's audit table.
type Store struct{ st store.Audit }

// NewStore is the sink writing to st's audit table.
func NewStore(st store.Audit) *Store { return &Store{st: st} }

func (s *Store) Name() string { return "the store's audit table" }

func (s *Store) Write(ctx context.Context, recs []Record) error {
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
func FromRow(r store.AuditRow) Record {
	return Record{Time: r.Time, Kind: Kind(r.Kind), Principal: r.Principal, Name: r.Name, Groups: r.Groups, Host: r.Host,
		Face: r.Face, Server: r.Server, Tool: r.Tool, Action: r.Action, Outcome: r.Outcome, Detail: r.Detail,
		DurationMS: r.DurationMS, Job: r.Job, Replica: r.Replica, ArgsSHA256: r.ArgsSHA256}
}

// Prune deletes, every interval until ctx ends, the rows of st's audit
// table older than maxAge and beyond the newest maxRows (0: no bound by
// that measure), once at the start too. Failures are logged.
func (l *Log) Prune(ctx context.Context, st store.Audit, maxAge time.Duration, maxRows int, every time.Duration) error {
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
			l.log.Warn("pruning the audit log", "err", err)
		case n > 0:
			l.log.Info("pruned the audit log", "rows", n)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil
		}
	}
}
