package store

import (
	"context"
	"strings"
	"time"
)

// Audit is a store that keeps the audit log: one row per record,
// indexed by principal, tool and time. The SQLite and PostgreSQL stores
// are both one.
type Audit interface {
	// AppendAudit inserts rows, all or none.
	AppendAudit(ctx context.Context, rows []AuditRow) error
	// QueryAudit returns the rows q selects, newest first.
	QueryAudit(ctx context.Context, q AuditQuery) ([]AuditRow, error)
	// PruneAudit deletes the rows older than before (zero: none by
	// age) and all but the newest keep (0: none by count), and says how
	// many went.
	PruneAudit(ctx context.Context, before time.Time, keep int) (int64, error)
}

// AuditRow is one record of the audit log. Groups are kept one per
// line.
type AuditRow struct {
	Time                                      time.Time
	Kind, Principal, Name                     string
	Groups                                    []string
	Host, Face, Server, Tool, Action, Outcome string
	Detail                                    string
	DurationMS                                int64
	Job, Replica, ArgsSHA256                  string
}

// AuditQuery selects rows: each field set narrows, "" and zero do not.
type AuditQuery struct {
	// Principal matches the principal's ID or its name.
	Principal, Tool, Server, Outcome, Kind string
	Since, Until                           time.Time // Since <= time < Until
	Limit                                  int       // 0: all
}

const auditColumns = `at, kind, principal, name, groups, host, face, server, tool, action, outcome, detail, duration_ms, job, replica, args_sha256`

func appendAudit(ctx context.Context, db dialect, bind func(string) string, what string, rows []AuditRow) error {
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(`INSERT INTO audit (` + auditColumns + `) VALUES `)
	args := make([]any, 0, len(rows)*16)
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
		args = append(args, ms(r.Time), r.Kind, r.Principal, r.Name, strings.Join(r.Groups, "\n"), r.Host, r.Face,
			r.Server, r.Tool, r.Action, r.Outcome, r.Detail, r.DurationMS, r.Job, r.Replica, r.ArgsSHA256)
	}
	if _, err := db.exec(ctx, bind(b.String()), args...); err != nil {
		return db.fail(what, err)
	}
	return nil
}

func queryAudit(ctx context.Context, db dialect, bind func(string) string, q AuditQuery) ([]AuditRow, error) {
	var where []string
	var args []any
	add := func(cond string, v ...any) {
		where = append(where, cond)
		args = append(args, v...)
	}
	if q.Principal != "" {
		add(`(principal = ? OR name = ?)`, q.Principal, q.Principal)
	}
	for _, f := range []struct{ col, v string }{{"tool", q.Tool}, {"server", q.Server}, {"outcome", q.Outcome}, {"kind", q.Kind}} {
		if f.v != "" {
			add(f.col+` = ?`, f.v)
		}
	}
	if !q.Since.IsZero() {
		add(`at >= ?`, ms(q.Since))
	}
	if !q.Until.IsZero() {
		add(`at < ?`, ms(q.Until))
	}
	sql := `SELECT ` + auditColumns + ` FROM audit`
	if len(where) > 0 {
		sql += ` WHERE ` + strings.Join(where, ` AND `)
	}
	sql += ` ORDER BY at DESC, id DESC`
	if q.Limit > 0 {
		sql += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	out := []AuditRow{}
	err := db.query(ctx, bind(sql), args, func(s scanner) error {
		var r AuditRow
		var at int64
		var groups string
		if err := s.Scan(&at, &r.Kind, &r.Principal, &r.Name, &groups, &r.Host, &r.Face, &r.Server, &r.Tool, &r.Action,
			&r.Outcome, &r.Detail, &r.DurationMS, &r.Job, &r.Replica, &r.ArgsSHA256); err != nil {
			return err
		}
		r.Time = time.UnixMilli(at)
		if groups != "" {
			r.Groups = strings.Split(groups, "\n")
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, db.fail("reading the audit log", err)
	}
	return out, nil
}

func pruneAudit(ctx context.Context, db dialect, bind func(string) string, before time.Time, keep int) (int64, error) {
	var n int64
	if !before.IsZero() {
		k, err := db.exec(ctx, bind(`DELETE FROM audit WHERE at < ?`), ms(before))
		if err != nil {
			return n, db.fail("pruning the audit log", err)
		}
		n += k
	}
	if keep > 0 {
		k, err := db.exec(ctx, bind(`DELETE FROM audit WHERE id <= (SELECT id FROM audit ORDER BY id DESC LIMIT 1 OFFSET ?)`), keep)
		if err != nil {
			return n, db.fail("pruning the audit log", err)
		}
		n += k
	}
	return n, nil
}

func (s *SQLite) AppendAudit(ctx context.Context, rows []AuditRow) error {
	return appendAudit(ctx, s.jobsSQL.db, questionMarks, "writing the audit log", rows)
}

func (s *SQLite) QueryAudit(ctx context.Context, q AuditQuery) ([]AuditRow, error) {
	return queryAudit(ctx, s.jobsSQL.db, questionMarks, q)
}

func (s *SQLite) PruneAudit(ctx context.Context, before time.Time, keep int) (int64, error) {
	return pruneAudit(ctx, s.jobsSQL.db, questionMarks, before, keep)
}

func (s *Postgres) AppendAudit(ctx context.Context, rows []AuditRow) error {
	return appendAudit(ctx, s.jobsSQL.db, numbered, "writing the audit log", rows)
}

func (s *Postgres) QueryAudit(ctx context.Context, q AuditQuery) ([]AuditRow, error) {
	return queryAudit(ctx, s.jobsSQL.db, numbered, q)
}

func (s *Postgres) PruneAudit(ctx context.Context, before time.Time, keep int) (int64, error) {
	return pruneAudit(ctx, s.jobsSQL.db, numbered, before, keep)
}
