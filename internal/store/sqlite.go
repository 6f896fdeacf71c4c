package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	// modernc.org/sqlite is SQLite compiled to Go: no cgo, so mcpx stays
	// one static binary that cross-compiles; and no WebAssembly runtime
	// to start (ncruces/go-sqlite3's approach), so the store opens in
	// milliseconds. It is the SQLite driver River's SQLite driver uses,
	// which a later queue could share.
	_ "modernc.org/sqlite"
)

// SQLite is the embedded store: one SQLite file, WAL, mode 0600.
type SQLite struct {
	db      *sql.DB
	path    string
	cancels cancels // this process's watchers of cancels
}

// FileName is the store's file name in the state directory.
const FileName = "jobs.db"

const schema = `
CREATE TABLE IF NOT EXISTS jobs (
	id          TEXT PRIMARY KEY,
	principal   TEXT NOT NULL,
	server      TEXT NOT NULL,
	tool        TEXT NOT NULL,
	key         TEXT NOT NULL,
	params      BLOB,
	idempotent  INTEGER NOT NULL,
	status      TEXT NOT NULL,
	attempt     INTEGER NOT NULL,
	owner       TEXT NOT NULL,
	lease_until INTEGER NOT NULL,
	progress    BLOB,
	result      BLOB,
	error       TEXT NOT NULL,
	note        TEXT NOT NULL,
	created     INTEGER NOT NULL,
	updated     INTEGER NOT NULL,
	finished    INTEGER NOT NULL,
	expired     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS jobs_running ON jobs (status, principal, key);
CREATE INDEX IF NOT EXISTS jobs_finished ON jobs (finished);
`

// OpenSQLite opens (creating it if need be) the store in file path; its
// directory is made with mode 0700, the file with mode 0600 (the WAL and
// shared-memory files take the same mode). Writes wait up to 10 s for a
// lock another process holds.
func OpenSQLite(path string) (*SQLite, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("making the job store's directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the job store: %w", err)
	}
	f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, fmt.Errorf("opening the job store: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("opening the job store %s: %w", path, err)
	}
	// One connection: SQLite has one writer anyway, and busy waits
	// between connections of one process are lost time.
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening the job store %s: %w", path, err)
	}
	return &SQLite{db: db, path: path}, nil
}

// Path returns the store's file.
func (s *SQLite) Path() string { return s.path }

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

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

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *SQLite) Create(ctx context.Context, j *Job) error {
	if j.ID == "" || j.Principal == "" {
		return errors.New("creating a job: it needs an id and a principal")
	}
	if j.Status != Running {
		return fmt.Errorf("creating a job: status %q, not running", j.Status)
	}
	now := time.Now()
	if j.Created.IsZero() {
		j.Created = now
	}
	j.Updated = now
	if j.Attempt == 0 {
		j.Attempt = 1
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO jobs (id, principal, server, tool, key, params, idempotent, status, attempt,
		owner, lease_until, progress, result, error, note, created, updated, finished) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0)`,
		j.ID, j.Principal, j.Server, j.Tool, j.Key, j.Params, btoi(j.Idempotent), string(j.Status), j.Attempt,
		j.Owner, ms(j.LeaseUntil), j.Progress, nil, j.Error, j.Note, ms(j.Created), ms(j.Updated))
	if err != nil {
		return fmt.Errorf("creating job %q: %w", j.ID, err)
	}
	return nil
}

const columns = `id, principal, server, tool, key, params, idempotent, status, attempt, owner, lease_until,
	progress, result, error, note, created, updated, finished, expired`

type scanner interface{ Scan(...any) error }

func scanJob(r scanner) (*Job, bool, error) {
	var j Job
	var idem int
	var status string
	var lease, created, updated, finished, expired int64
	err := r.Scan(&j.ID, &j.Principal, &j.Server, &j.Tool, &j.Key, &j.Params, &idem, &status, &j.Attempt, &j.Owner, &lease,
		&j.Progress, &j.Result, &j.Error, &j.Note, &created, &updated, &finished, &expired)
	if err != nil {
		return nil, false, err
	}
	j.Idempotent, j.Status = idem != 0, Status(status)
	j.LeaseUntil, j.Created, j.Updated, j.Finished = fromMs(lease), fromMs(created), fromMs(updated), fromMs(finished)
	return &j, expired != 0, nil
}

func (s *SQLite) Get(ctx context.Context, principal, id string) (*Job, error) {
	j, expired, err := scanJob(s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM jobs WHERE id = ?`, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, &IDError{ID: id, Err: ErrUnknown}
	case err != nil:
		return nil, fmt.Errorf("reading job %q: %w", id, err)
	case principal != "" && j.Principal != principal:
		return nil, &IDError{ID: id, Err: ErrForeign}
	case expired:
		return nil, &IDError{ID: id, Err: ErrExpired}
	}
	return j, nil
}

func (s *SQLite) List(ctx context.Context, principal string, limit int) ([]*Job, error) {
	q := `SELECT ` + strings.Replace(columns, "result,", "NULL,", 1) + ` FROM jobs WHERE expired = 0`
	var args []any
	if principal != "" {
		q += ` AND principal = ?`
		args = append(args, principal)
	}
	q += ` ORDER BY created DESC, id`
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	return s.query(ctx, "listing jobs", q, args...)
}

func (s *SQLite) query(ctx context.Context, what, q string, args ...any) ([]*Job, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []*Job
	for rows.Next() {
		j, _, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

func (s *SQLite) FindRunning(ctx context.Context, principal, key string) (*Job, error) {
	j, _, err := scanJob(s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM jobs
		WHERE status = 'running' AND principal = ? AND key = ? ORDER BY created DESC LIMIT 1`, principal, key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("finding a running job: %w", err)
	}
	return j, nil
}

func (s *SQLite) SetProgress(ctx context.Context, id string, progress []byte) error {
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET progress = ?, updated = ? WHERE id = ? AND status = 'running'`,
		progress, ms(time.Now()), id)
	if err != nil {
		return fmt.Errorf("writing job %q's progress: %w", id, err)
	}
	return nil
}

// changed runs a compare-and-set update and reports whether it matched.
func (s *SQLite) changed(ctx context.Context, what, q string, args ...any) (bool, error) {
	r, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	return n > 0, nil
}

func (s *SQLite) Finish(ctx context.Context, id, owner string, to Status, result []byte, errText string) (bool, error) {
	if !to.Final() {
		return false, fmt.Errorf("finishing job %q: %q is not an end state", id, to)
	}
	now := ms(time.Now())
	return s.changed(ctx, "finishing job "+id, `UPDATE jobs SET status = ?, result = ?, error = ?, updated = ?, finished = ?, lease_until = 0
		WHERE id = ? AND status = 'running' AND owner = ?`, string(to), result, errText, now, now, id, owner)
}

func (s *SQLite) Cancel(ctx context.Context, id, why string) (bool, error) {
	now := ms(time.Now())
	ok, err := s.changed(ctx, "cancelling job "+id, `UPDATE jobs SET status = 'cancelled', error = ?, updated = ?, finished = ?, lease_until = 0
		WHERE id = ? AND status = 'running'`, why, now, now, id)
	if ok {
		s.cancels.tell(id, why)
	}
	return ok, err
}

// WatchCancels hears the cancels made through this SQLite value (this
// process): see [CancelWatcher].
func (s *SQLite) WatchCancels(ctx context.Context, fn func(id, why string)) error {
	return s.cancels.watch(ctx, fn)
}

func (s *SQLite) Release(ctx context.Context, owner string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET lease_until = 1 WHERE owner = ? AND status = 'running'`, owner)
	if err != nil {
		return fmt.Errorf("releasing jobs: %w", err)
	}
	return nil
}

func (s *SQLite) Renew(ctx context.Context, owner string, until time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET lease_until = ? WHERE owner = ? AND status = 'running'`, ms(until), owner)
	if err != nil {
		return fmt.Errorf("renewing job leases: %w", err)
	}
	return nil
}

func (s *SQLite) Orphans(ctx context.Context, self string, lapsedBefore time.Time) ([]*Job, error) {
	return s.query(ctx, "finding orphaned jobs", `SELECT `+columns+` FROM jobs
		WHERE status = 'running' AND owner != ? AND lease_until < ? ORDER BY created`, self, ms(lapsedBefore))
}

func (s *SQLite) Claim(ctx context.Context, id, self string, prevLease, until time.Time, note string) (bool, error) {
	return s.changed(ctx, "claiming job "+id, `UPDATE jobs SET owner = ?, lease_until = ?, attempt = attempt + 1, note = ?, updated = ?
		WHERE id = ? AND status = 'running' AND lease_until = ? AND owner != ?`,
		self, ms(until), note, ms(time.Now()), id, ms(prevLease), self)
}

func (s *SQLite) Expire(ctx context.Context, finishedBefore, forgetBefore time.Time) (int, error) {
	r, err := s.db.ExecContext(ctx, `UPDATE jobs SET expired = 1, result = NULL, params = NULL, progress = NULL
		WHERE expired = 0 AND status != 'running' AND finished < ?`, ms(finishedBefore))
	if err != nil {
		return 0, fmt.Errorf("expiring jobs: %w", err)
	}
	n, _ := r.RowsAffected()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM jobs WHERE expired = 1 AND finished < ?`, ms(forgetBefore)); err != nil {
		return int(n), fmt.Errorf("forgetting expired jobs: %w", err)
	}
	return int(n), nil
}
