package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
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
	jobsSQL
	db      *sql.DB
	path    string
	file    os.FileInfo  // the file as opened: see checkFile
	size    atomic.Int64 // the largest size checkFile has seen it have
	cancels cancels      // this process's watchers of cancels
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
	expired     INTEGER NOT NULL DEFAULT 0,
	late_status TEXT NOT NULL DEFAULT '',
	late_result BLOB,
	late_error  TEXT NOT NULL DEFAULT '',
	late_at     INTEGER NOT NULL DEFAULT 0,
	who_name    TEXT NOT NULL DEFAULT '',
	who_groups  TEXT NOT NULL DEFAULT '',
	who_client  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS jobs_running ON jobs (status, principal, key);
CREATE INDEX IF NOT EXISTS jobs_finished ON jobs (finished);
CREATE TABLE IF NOT EXISTS audit (
	id          INTEGER PRIMARY KEY,
	at          INTEGER NOT NULL,
	kind        TEXT NOT NULL,
	principal   TEXT NOT NULL,
	name        TEXT NOT NULL,
	groups      TEXT NOT NULL,
	host        TEXT NOT NULL,
	face        TEXT NOT NULL,
	server      TEXT NOT NULL,
	tool        TEXT NOT NULL,
	action      TEXT NOT NULL,
	outcome     TEXT NOT NULL,
	detail      TEXT NOT NULL,
	duration_ms INTEGER NOT NULL,
	job         TEXT NOT NULL,
	replica     TEXT NOT NULL,
	args_sha256 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_at ON audit (at);
CREATE INDEX IF NOT EXISTS audit_principal ON audit (principal, at);
CREATE INDEX IF NOT EXISTS audit_name ON audit (name, at);
CREATE INDEX IF NOT EXISTS audit_tool ON audit (tool, at);
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
	err = addLateColumns(db)
	if err == nil {
		err = addWhoColumns(db)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening the job store %s: %w", path, err)
	}
	// The schema into the file itself, out of the WAL: from now on the
	// file holds SQLite's header and never shrinks (see checkFile).
	if _, err := db.Exec(`PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening the job store %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening the job store: %w", err)
	}
	s := &SQLite{jobsSQL: jobsSQL{db: sqlDB{db}, q: sqliteStatements()}, db: db, path: path, file: fi}
	s.size.Store(fi.Size())
	return s, nil
}

// FileGoneError says the store's file was removed or replaced under the
// process that opened it: what it writes goes to a file no one will read
// again (the next start makes a new one).
type FileGoneError struct {
	Path string
	Err  error // why it is gone: the stat's error, or nil for another file
	// Damage, if set, says how the file itself was cut or overwritten
	// (it is still the file opened): "truncated to 0 bytes (it had
	// 12288)", "overwritten: it no longer starts with SQLite's header".
	Damage string
}

func (e *FileGoneError) Error() string {
	what := "replaced by another file"
	switch {
	case e.Damage != "":
		what = e.Damage
	case e.Err != nil:
		what = "removed (" + e.Err.Error() + ")"
	}
	return fmt.Sprintf("the job store file %s was %s while mcpx ran: jobs can no longer be kept (restart mcpx to make a new store)", e.Path, what)
}
func (e *FileGoneError) Unwrap() error { return e.Err }

// checkFile refuses a write to a store whose file is no longer the one
// opened, or was cut or overwritten under it: SQLite would go on writing
// to the open, unlinked file, or serve and write pages from its cache
// and WAL over a file whose pages are gone, and the jobs written would
// be lost at the next start with no word. SQLite's file never shrinks
// (no VACUUM, no auto_vacuum: freed pages are reused), so one smaller
// than it was is one cut by someone else; and it starts with SQLite's
// header. A stat and a read of 16 bytes: no PRAGMA quick_check, which
// reads every page, on the way of each write.
func (s *SQLite) checkFile() error {
	fi, err := os.Stat(s.path)
	switch {
	case err != nil:
		return &FileGoneError{Path: s.path, Err: err}
	case !os.SameFile(fi, s.file):
		return &FileGoneError{Path: s.path}
	}
	if was := s.size.Load(); fi.Size() < was {
		return &FileGoneError{Path: s.path, Damage: fmt.Sprintf("truncated to %d bytes (it had %d)", fi.Size(), was)}
	}
	s.size.Store(fi.Size()) // one connection: the writes that check come one at a time
	if fi.Size() > 0 {
		f, err := os.Open(s.path)
		if err != nil {
			return &FileGoneError{Path: s.path, Err: err}
		}
		defer f.Close()
		head := make([]byte, len(sqliteHeader))
		if n, _ := f.ReadAt(head, 0); n < len(head) || string(head) != sqliteHeader {
			return &FileGoneError{Path: s.path, Damage: "overwritten: it no longer starts with SQLite's header"}
		}
	}
	return nil
}

// sqliteHeader is how every SQLite database file starts.
const sqliteHeader = "SQLite format 3\x00"

// Create, Finish and Renew check the file first (see checkFile): a job
// is not started, ended nor kept alive in a file that is gone.

func (s *SQLite) Create(ctx context.Context, j *Job, term time.Duration) error {
	if err := s.checkFile(); err != nil {
		return fmt.Errorf("creating job %q: %w", j.ID, err)
	}
	return s.jobsSQL.Create(ctx, j, term)
}

func (s *SQLite) Finish(ctx context.Context, id string, l Lease, to Status, result []byte, errText string) (bool, error) {
	if err := s.checkFile(); err != nil {
		return false, fmt.Errorf("finishing job %s: %w", id, err)
	}
	return s.jobsSQL.Finish(ctx, id, l, to, result, errText)
}

func (s *SQLite) Renew(ctx context.Context, owner string, ids []string, term time.Duration) ([]string, error) {
	if err := s.checkFile(); err != nil {
		return nil, fmt.Errorf("renewing job leases: %w", err)
	}
	return s.jobsSQL.Renew(ctx, owner, ids, term)
}

// addLateColumns brings a store file made before jobs kept late ends to
// the table above.
func addLateColumns(db *sql.DB) error {
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM pragma_table_info('jobs') WHERE name = 'late_status'`).Scan(&n); err != nil || n > 0 {
		return err
	}
	for _, c := range []string{`late_status TEXT NOT NULL DEFAULT ''`, `late_result BLOB`, `late_error TEXT NOT NULL DEFAULT ''`, `late_at INTEGER NOT NULL DEFAULT 0`} {
		if _, err := db.Exec(`ALTER TABLE jobs ADD COLUMN ` + c); err != nil {
			return err
		}
	}
	return nil
}

// addWhoColumns brings a store file made before jobs kept their
// principal's name, groups and host (Job.Name) to the table above.
func addWhoColumns(db *sql.DB) error {
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM pragma_table_info('jobs') WHERE name = 'who_name'`).Scan(&n); err != nil || n > 0 {
		return err
	}
	for _, c := range []string{`who_name`, `who_groups`, `who_client`} {
		if _, err := db.Exec(`ALTER TABLE jobs ADD COLUMN ` + c + ` TEXT NOT NULL DEFAULT ''`); err != nil {
			return err
		}
	}
	return nil
}

// Path returns the store's file.
func (s *SQLite) Path() string { return s.path }

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

func (s *SQLite) Cancel(ctx context.Context, id, why string) (bool, error) {
	ok, err := s.changed(ctx, "cancelling job "+id, s.q.cancel, cancelArgs(id, why)...)
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

// SQLite's clock is this machine's: the store is one machine's. The
// statements are built on first use, as pgStatements are.
var sqliteStatements = sync.OnceValue(func() *statements {
	return newStatements(questionMarks, "NULL", "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
		"id IN (SELECT value FROM json_each(?))")
})

// sqlDB is database/sql's driver as jobsSQL's dialect.
type sqlDB struct{ db *sql.DB }

func (d sqlDB) exec(ctx context.Context, q string, args ...any) (int64, error) {
	r, err := d.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

func (d sqlDB) queryRow(ctx context.Context, q string, args ...any) scanner {
	return d.db.QueryRowContext(ctx, q, args...)
}

func (d sqlDB) query(ctx context.Context, q string, args []any, each func(scanner) error) error {
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	return eachRow(rows, each)
}

func (sqlDB) noRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

func (sqlDB) list(ids []string) any {
	b, _ := json.Marshal(ids)
	if ids == nil {
		b = []byte("[]")
	}
	return string(b)
}

func (sqlDB) fail(what string, err error) error { return fmt.Errorf("%s: %w", what, err) }
