package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// jobsSQL is what the SQLite and PostgreSQL stores share: the statements,
// the reading of a row and the status transitions, each one compare-and-set
// UPDATE. A dialect adapts one database's driver; each store embeds a
// jobsSQL and adds what differs (opening, Cancel's announcement, watching
// cancels, Close).
//
// Rows are the same in both: times in Unix milliseconds (so that a lease
// read back compares equal in Claim's compare-and-set), the two flags
// (idempotent, expired) an integer in SQLite and a boolean in PostgreSQL,
// which the statements treat alike (true, NOT expired).
type jobsSQL struct {
	db dialect
	q  *statements
}

// dialect is what jobsSQL needs of a database.
type dialect interface {
	// exec runs a statement and returns how many rows it changed.
	exec(ctx context.Context, q string, args ...any) (int64, error)
	// queryRow runs a query of one row; its Scan returns an error that
	// noRows recognizes when there is none.
	queryRow(ctx context.Context, q string, args ...any) scanner
	// query runs a query and calls each with every row in turn.
	query(ctx context.Context, q string, args []any, each func(scanner) error) error
	noRows(err error) bool
	// fail wraps err as what failed.
	fail(what string, err error) error
	// list binds ids as the one argument of a statement's inList.
	list(ids []string) any
}

type scanner interface{ Scan(...any) error }

// eachRow calls each with every row of rows in turn.
func eachRow(rows interface {
	scanner
	Next() bool
	Err() error
}, each func(scanner) error) error {
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// statements are the job store's SQL in one dialect's placeholders.
type statements struct {
	insert, get, findRunning, setProgress, finish, late, cancel string
	release, renew, orphans, claim, expire, forget              string
	// list[byPrincipal][limited]
	list [2][2]string
}

const columns = `id, principal, server, tool, key, params, idempotent, status, attempt, owner, lease_until,
	progress, result, error, note, created, updated, finished, expired, late_status, late_result, late_error, late_at,
	who_name, who_groups, who_client`

// newStatements writes the statements with ? placeholders through bind
// (a dialect's numbering), once per dialect. nullBytes is a NULL that
// reads as bytes (List leaves results out); now is the database's clock
// in Unix milliseconds, which every lease and every time a row holds is
// read and written against (never a gateway's: theirs may be skewed;
// a gateway gives durations, measured on its monotonic clock); inList is
// the condition that id is one of a list bound as one argument.
func newStatements(bind func(string) string, nullBytes, now, inList string) *statements {
	s := &statements{
		insert: `INSERT INTO jobs (id, principal, server, tool, key, params, idempotent, status, attempt,
			owner, lease_until, progress, error, note, created, updated, finished, who_name, who_groups, who_client)
			VALUES (?,?,?,?,?,?,?,?,?,?,` + now + ` + ?,?,?,?,` + now + ` - ?,` + now + `,0,?,?,?)`,
		get: `SELECT ` + columns + ` FROM jobs WHERE id = ?`,
		findRunning: `SELECT ` + columns + ` FROM jobs
			WHERE status = 'running' AND principal = ? AND key = ? ORDER BY created DESC LIMIT 1`,
		// Every write of a running job names the lease it was made under
		// (owner and attempt): a stale one matches no row.
		setProgress: `UPDATE jobs SET progress = ?, updated = ` + now + ` WHERE id = ? AND status = 'running' AND owner = ? AND attempt = ?`,
		finish: `UPDATE jobs SET status = ?, result = ?, error = ?, updated = ` + now + `, finished = ` + now + `, lease_until = 0
			WHERE id = ? AND status = 'running' AND owner = ? AND attempt = ?`,
		late: `UPDATE jobs SET late_status = ?, late_result = ?, late_error = ?, late_at = ` + now + `,
			note = CASE WHEN note = '' THEN ? ELSE note || ' ' || ? END
			WHERE id = ? AND late_status = '' AND attempt > ?`,
		cancel: `UPDATE jobs SET status = 'cancelled', error = ?, updated = ` + now + `, finished = ` + now + `, lease_until = 0
			WHERE id = ? AND status = 'running'`,
		release: `UPDATE jobs SET lease_until = 1 WHERE owner = ? AND status = 'running'`,
		renew:   `UPDATE jobs SET lease_until = ` + now + ` + ? WHERE owner = ? AND status = 'running' AND ` + inList + ` RETURNING id`,
		orphans: `SELECT ` + columns + ` FROM jobs
			WHERE status = 'running' AND lease_until < ` + now + ` - ? ORDER BY created`,
		claim: `UPDATE jobs SET owner = ?, lease_until = ` + now + ` + ?, attempt = attempt + 1, note = ?, updated = ` + now + `
			WHERE id = ? AND status = 'running' AND owner = ? AND attempt = ? AND lease_until < ` + now + ` - ?`,
		expire: `UPDATE jobs SET expired = true, result = NULL, late_result = NULL, params = NULL, progress = NULL
			WHERE NOT expired AND status != 'running' AND finished < ` + now + ` - ?`,
		forget: `DELETE FROM jobs WHERE expired AND finished < ` + now + ` - ?`,
	}
	for _, p := range []*string{&s.insert, &s.get, &s.findRunning, &s.setProgress, &s.finish, &s.late, &s.cancel,
		&s.release, &s.renew, &s.orphans, &s.claim, &s.expire, &s.forget} {
		*p = bind(*p)
	}
	listed := strings.Replace(columns, "result,", nullBytes+",", 1)
	listed = strings.Replace(listed, "late_result,", nullBytes+",", 1)
	list := `SELECT ` + listed + ` FROM jobs WHERE NOT expired`
	for mine := range 2 {
		for limited := range 2 {
			q := list
			if mine == 1 {
				q += ` AND principal = ?`
			}
			q += ` ORDER BY created DESC, id`
			if limited == 1 {
				q += ` LIMIT ?`
			}
			s.list[mine][limited] = bind(q)
		}
	}
	return s
}

// questionMarks leaves the placeholders as they are (SQLite's).
func questionMarks(q string) string { return q }

// numbered turns the placeholders into $1, $2, … (PostgreSQL's).
func numbered(q string) string {
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c != '?' {
			b.WriteRune(c)
			continue
		}
		n++
		fmt.Fprintf(&b, "$%d", n)
	}
	return b.String()
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMs(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v)
}

// flag reads a flag column: a boolean (PostgreSQL) or an integer
// (SQLite).
type flag bool

func (f *flag) Scan(v any) error {
	switch v := v.(type) {
	case bool:
		*f = flag(v)
	case int64:
		*f = v != 0
	default:
		return fmt.Errorf("a flag column holds %T, not a boolean or an integer", v)
	}
	return nil
}

// scanJob reads a row of columns and whether its job has expired.
func scanJob(r scanner) (*Job, bool, error) {
	var j Job
	var status string
	var expired flag
	var lease, created, updated, finished, lateAt int64
	var late Late
	var lateStatus, groups string
	err := r.Scan(&j.ID, &j.Principal, &j.Server, &j.Tool, &j.Key, &j.Params, (*flag)(&j.Idempotent), &status, &j.Attempt, &j.Owner, &lease,
		&j.Progress, &j.Result, &j.Error, &j.Note, &created, &updated, &finished, &expired, &lateStatus, &late.Result, &late.Error, &lateAt,
		&j.Name, &groups, &j.Client)
	if err != nil {
		return nil, false, err
	}
	if groups != "" {
		j.Groups = strings.Split(groups, "\n")
	}
	j.Status = Status(status)
	j.LeaseUntil, j.Created, j.Updated, j.Finished = fromMs(lease), fromMs(created), fromMs(updated), fromMs(finished)
	if lateStatus != "" {
		late.Status, late.At = Status(lateStatus), fromMs(lateAt)
		j.Late = &late
	}
	return &j, bool(expired), nil
}

func (s *jobsSQL) Create(ctx context.Context, j *Job, term time.Duration) error {
	if j.ID == "" || j.Principal == "" {
		return errors.New("creating a job: it needs an id and a principal")
	}
	if j.Status != Running {
		return fmt.Errorf("creating a job: status %q, not running", j.Status)
	}
	var age time.Duration // since the call began, on this process's monotonic clock
	if !j.Created.IsZero() {
		age = max(time.Since(j.Created), 0)
	}
	if j.Attempt == 0 {
		j.Attempt = 1
	}
	_, err := s.db.exec(ctx, s.q.insert, j.ID, j.Principal, j.Server, j.Tool, j.Key, j.Params, j.Idempotent, string(j.Status),
		j.Attempt, j.Owner, term.Milliseconds(), j.Progress, j.Error, j.Note, age.Milliseconds(), j.Name, strings.Join(j.Groups, "\n"), j.Client)
	if err != nil {
		return s.db.fail(fmt.Sprintf("creating job %q", j.ID), err)
	}
	return nil
}

func (s *jobsSQL) Get(ctx context.Context, principal, id string) (*Job, error) {
	j, expired, err := scanJob(s.db.queryRow(ctx, s.q.get, id))
	switch {
	case err != nil && s.db.noRows(err):
		return nil, &IDError{ID: id, Err: ErrUnknown}
	case err != nil:
		return nil, s.db.fail(fmt.Sprintf("reading job %q", id), err)
	case principal != "" && j.Principal != principal:
		return nil, &IDError{ID: id, Err: ErrForeign}
	case expired:
		return nil, &IDError{ID: id, Err: ErrExpired}
	}
	return j, nil
}

func (s *jobsSQL) List(ctx context.Context, principal string, limit int) ([]*Job, error) {
	var args []any
	mine, limited := 0, 0
	if principal != "" {
		mine = 1
		args = append(args, principal)
	}
	if limit > 0 {
		limited = 1
		args = append(args, limit)
	}
	return s.jobList(ctx, "listing jobs", s.q.list[mine][limited], args...)
}

func (s *jobsSQL) jobList(ctx context.Context, what, q string, args ...any) ([]*Job, error) {
	var out []*Job
	err := s.db.query(ctx, q, args, func(r scanner) error {
		j, _, err := scanJob(r)
		if err == nil {
			out = append(out, j)
		}
		return err
	})
	if err != nil {
		return nil, s.db.fail(what, err)
	}
	return out, nil
}

func (s *jobsSQL) FindRunning(ctx context.Context, principal, key string) (*Job, error) {
	j, _, err := scanJob(s.db.queryRow(ctx, s.q.findRunning, principal, key))
	if err != nil && s.db.noRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, s.db.fail("finding a running job", err)
	}
	return j, nil
}

func (s *jobsSQL) SetProgress(ctx context.Context, id string, l Lease, progress []byte) (bool, error) {
	return s.changed(ctx, fmt.Sprintf("writing job %q's progress", id), s.q.setProgress, progress, id, l.Owner, l.Attempt)
}

// changed runs a compare-and-set update and reports whether it matched.
// Each is one statement: SQLite has one writer, and PostgreSQL re-checks
// a row's WHERE after waiting for a concurrent writer of it, so of two
// racing updates only one matches.
func (s *jobsSQL) changed(ctx context.Context, what, q string, args ...any) (bool, error) {
	n, err := s.db.exec(ctx, q, args...)
	if err != nil {
		return false, s.db.fail(what, err)
	}
	return n > 0, nil
}

func (s *jobsSQL) Finish(ctx context.Context, id string, l Lease, to Status, result []byte, errText string) (bool, error) {
	if !to.Final() {
		return false, fmt.Errorf("finishing job %q: %q is not an end state", id, to)
	}
	return s.changed(ctx, "finishing job "+id, s.q.finish, string(to), result, errText, id, l.Owner, l.Attempt)
}

func (s *jobsSQL) KeepLate(ctx context.Context, id string, l Lease, to Status, result []byte, errText, note string) (bool, error) {
	if !to.Final() {
		return false, fmt.Errorf("keeping job %q's late end: %q is not an end state", id, to)
	}
	return s.changed(ctx, "keeping job "+id+"'s late end", s.q.late, string(to), result, errText, note, note, id, l.Attempt)
}

// cancelArgs are the arguments of statements.cancel.
func cancelArgs(id, why string) []any { return []any{why, id} }

func (s *jobsSQL) Release(ctx context.Context, owner string) error {
	if _, err := s.db.exec(ctx, s.q.release, owner); err != nil {
		return s.db.fail("releasing jobs", err)
	}
	return nil
}

func (s *jobsSQL) Renew(ctx context.Context, owner string, ids []string, term time.Duration) ([]string, error) {
	renewed := make([]string, 0, len(ids))
	err := s.db.query(ctx, s.q.renew, []any{term.Milliseconds(), owner, s.db.list(ids)}, func(r scanner) error {
		var id string
		if err := r.Scan(&id); err != nil {
			return err
		}
		renewed = append(renewed, id)
		return nil
	})
	if err != nil {
		return nil, s.db.fail("renewing job leases", err)
	}
	return renewed, nil
}

func (s *jobsSQL) Orphans(ctx context.Context, lapsedFor time.Duration) ([]*Job, error) {
	return s.jobList(ctx, "finding orphaned jobs", s.q.orphans, lapsedFor.Milliseconds())
}

func (s *jobsSQL) Claim(ctx context.Context, id string, prev Lease, self string, term, lapsedFor time.Duration, note string) (bool, error) {
	return s.changed(ctx, "claiming job "+id, s.q.claim, self, term.Milliseconds(), note, id, prev.Owner, prev.Attempt, lapsedFor.Milliseconds())
}

func (s *jobsSQL) Expire(ctx context.Context, keep, forget time.Duration) (int, error) {
	n, err := s.db.exec(ctx, s.q.expire, keep.Milliseconds())
	if err != nil {
		return 0, s.db.fail("expiring jobs", err)
	}
	if forget == 0 {
		return int(n), nil
	}
	if _, err := s.db.exec(ctx, s.q.forget, forget.Milliseconds()); err != nil {
		return int(n), s.db.fail("forgetting expired jobs", err)
	}
	return int(n), nil
}
