package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres is the store several gateways share: one PostgreSQL database
// (or one schema of it, by the URL's search_path). Rows are those of the
// SQLite store, times in Unix milliseconds, so that a lease read back
// compares equal in Claim's compare-and-set. A cancel is announced on a
// channel of the schema's (NOTIFY), which [Postgres.WatchCancels] hears.
type Postgres struct {
	pool    *pgxpool.Pool
	channel string // the NOTIFY channel of cancels in this schema
	where   string // host:port/database, for errors (no password)
}

// IsPostgresURL reports whether spec names a PostgreSQL server rather
// than a SQLite file.
func IsPostgresURL(spec string) bool {
	return strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://")
}

// UnavailableError says the store could not be reached: the server is
// down or unreachable. Calls that need no store go on working.
type UnavailableError struct {
	Where string
	Err   error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("the job store (PostgreSQL at %s) is unavailable: %v", e.Where, e.Err)
}
func (e *UnavailableError) Unwrap() error { return e.Err }

// OpenPostgres connects to the PostgreSQL server url names and brings its
// schema up to date (see migrate); it waits for the server at most as
// long as ctx allows.
func OpenPostgres(ctx context.Context, rawURL string) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		// pgx's error may quote the URL, password and all.
		return nil, errors.New("opening the job store: the PostgreSQL URL is not valid (postgres://user:password@host:port/database)")
	}
	where := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, &UnavailableError{Where: where, Err: err}
	}
	s := &Postgres{pool: pool, where: where}
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		pool.Close()
		return nil, s.fail("opening the job store", err)
	}
	s.channel = "mcpx_cancel_" + schema
	if len(s.channel) > 63 {
		s.channel = s.channel[:63]
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, s.fail("bringing the job store's schema up to date", err)
	}
	return s, nil
}

// Where names the server and database, without credentials.
func (s *Postgres) Where() string { return s.where }

// Close closes the pool.
func (s *Postgres) Close() error {
	s.pool.Close()
	return nil
}

// fail wraps err as what failed; a server that cannot be reached is an
// UnavailableError.
func (s *Postgres) fail(what string, err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		err = &UnavailableError{Where: s.where, Err: err}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Redact returns rawURL with its password, if any, replaced: for logs.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(a store URL that does not parse)"
	}
	return u.Redacted()
}

const pgColumns = `id, principal, server, tool, key, params, idempotent, status, attempt, owner, lease_until,
	progress, result, error, note, created, updated, finished, expired`

func scanPG(r pgx.Row) (*Job, bool, error) {
	var j Job
	var status string
	var lease, created, updated, finished int64
	var expired bool
	err := r.Scan(&j.ID, &j.Principal, &j.Server, &j.Tool, &j.Key, &j.Params, &j.Idempotent, &status, &j.Attempt, &j.Owner, &lease,
		&j.Progress, &j.Result, &j.Error, &j.Note, &created, &updated, &finished, &expired)
	if err != nil {
		return nil, false, err
	}
	j.Status = Status(status)
	j.LeaseUntil, j.Created, j.Updated, j.Finished = fromMs(lease), fromMs(created), fromMs(updated), fromMs(finished)
	return &j, expired, nil
}

func (s *Postgres) Create(ctx context.Context, j *Job) error {
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
	_, err := s.pool.Exec(ctx, `INSERT INTO jobs (id, principal, server, tool, key, params, idempotent, status, attempt,
		owner, lease_until, progress, error, note, created, updated)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)`,
		j.ID, j.Principal, j.Server, j.Tool, j.Key, j.Params, j.Idempotent, string(j.Status), j.Attempt,
		j.Owner, ms(j.LeaseUntil), j.Progress, j.Error, j.Note, ms(j.Created), ms(j.Updated))
	if err != nil {
		return s.fail(fmt.Sprintf("creating job %q", j.ID), err)
	}
	return nil
}

func (s *Postgres) Get(ctx context.Context, principal, id string) (*Job, error) {
	j, expired, err := scanPG(s.pool.QueryRow(ctx, `SELECT `+pgColumns+` FROM jobs WHERE id = $1`, id))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, &IDError{ID: id, Err: ErrUnknown}
	case err != nil:
		return nil, s.fail(fmt.Sprintf("reading job %q", id), err)
	case principal != "" && j.Principal != principal:
		return nil, &IDError{ID: id, Err: ErrForeign}
	case expired:
		return nil, &IDError{ID: id, Err: ErrExpired}
	}
	return j, nil
}

func (s *Postgres) List(ctx context.Context, principal string, limit int) ([]*Job, error) {
	q := `SELECT ` + strings.Replace(pgColumns, "result,", "NULL::bytea,", 1) + ` FROM jobs WHERE NOT expired`
	var args []any
	if principal != "" {
		args = append(args, principal)
		q += fmt.Sprintf(` AND principal = $%d`, len(args))
	}
	q += ` ORDER BY created DESC, id`
	if limit > 0 {
		args = append(args, limit)
		q += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	return s.query(ctx, "listing jobs", q, args...)
}

func (s *Postgres) query(ctx context.Context, what, q string, args ...any) ([]*Job, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, s.fail(what, err)
	}
	defer rows.Close()
	var out []*Job
	for rows.Next() {
		j, _, err := scanPG(rows)
		if err != nil {
			return nil, s.fail(what, err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(what, err)
	}
	return out, nil
}

func (s *Postgres) FindRunning(ctx context.Context, principal, key string) (*Job, error) {
	j, _, err := scanPG(s.pool.QueryRow(ctx, `SELECT `+pgColumns+` FROM jobs
		WHERE status = 'running' AND principal = $1 AND key = $2 ORDER BY created DESC LIMIT 1`, principal, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.fail("finding a running job", err)
	}
	return j, nil
}

func (s *Postgres) SetProgress(ctx context.Context, id string, progress []byte) error {
	_, err := s.pool.Exec(ctx, `UPDATE jobs SET progress = $1, updated = $2 WHERE id = $3 AND status = 'running'`,
		progress, ms(time.Now()), id)
	if err != nil {
		return s.fail(fmt.Sprintf("writing job %q's progress", id), err)
	}
	return nil
}

// changed runs a compare-and-set update and reports whether it matched.
// Each is one statement: PostgreSQL re-checks a row's WHERE after
// waiting for a concurrent writer of it, so of two racing updates only
// one matches.
func (s *Postgres) changed(ctx context.Context, what, q string, args ...any) (bool, error) {
	tag, err := s.pool.Exec(ctx, q, args...)
	if err != nil {
		return false, s.fail(what, err)
	}
	return tag.RowsAffected() > 0, nil
}

func (s *Postgres) Finish(ctx context.Context, id, owner string, to Status, result []byte, errText string) (bool, error) {
	if !to.Final() {
		return false, fmt.Errorf("finishing job %q: %q is not an end state", id, to)
	}
	now := ms(time.Now())
	return s.changed(ctx, "finishing job "+id, `UPDATE jobs SET status = $1, result = $2, error = $3, updated = $4, finished = $4, lease_until = 0
		WHERE id = $5 AND status = 'running' AND owner = $6`, string(to), result, errText, now, id, owner)
}

// Cancel ends the job and announces it on the schema's channel, in one
// transaction: the NOTIFY is delivered if and only if the cancel commits.
// Its payload is the id, a line feed (no id has one), and why (a NOTIFY payload holds up to
// 8000 bytes: why is cut to fit).
func (s *Postgres) Cancel(ctx context.Context, id, why string) (bool, error) {
	what := "cancelling job " + id
	if len(why) > 4000 {
		why = strings.ToValidUTF8(why[:4000], "")
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, s.fail(what, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	now := ms(time.Now())
	tag, err := tx.Exec(ctx, `UPDATE jobs SET status = 'cancelled', error = $1, updated = $2, finished = $2, lease_until = 0
		WHERE id = $3 AND status = 'running'`, why, now, id)
	if err != nil {
		return false, s.fail(what, err)
	}
	if tag.RowsAffected() == 0 {
		return false, nil
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, s.channel, id+"\n"+why); err != nil {
		return false, s.fail(what, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, s.fail(what, err)
	}
	return true, nil
}

func (s *Postgres) Release(ctx context.Context, owner string) error {
	_, err := s.pool.Exec(ctx, `UPDATE jobs SET lease_until = 1 WHERE owner = $1 AND status = 'running'`, owner)
	if err != nil {
		return s.fail("releasing jobs", err)
	}
	return nil
}

func (s *Postgres) Renew(ctx context.Context, owner string, until time.Time) error {
	_, err := s.pool.Exec(ctx, `UPDATE jobs SET lease_until = $1 WHERE owner = $2 AND status = 'running'`, ms(until), owner)
	if err != nil {
		return s.fail("renewing job leases", err)
	}
	return nil
}

func (s *Postgres) Orphans(ctx context.Context, self string, lapsedBefore time.Time) ([]*Job, error) {
	return s.query(ctx, "finding orphaned jobs", `SELECT `+pgColumns+` FROM jobs
		WHERE status = 'running' AND owner != $1 AND lease_until < $2 ORDER BY created`, self, ms(lapsedBefore))
}

func (s *Postgres) Claim(ctx context.Context, id, self string, prevLease, until time.Time, note string) (bool, error) {
	return s.changed(ctx, "claiming job "+id, `UPDATE jobs SET owner = $1, lease_until = $2, attempt = attempt + 1, note = $3, updated = $4
		WHERE id = $5 AND status = 'running' AND lease_until = $6 AND owner != $1`,
		self, ms(until), note, ms(time.Now()), id, ms(prevLease))
}

func (s *Postgres) Expire(ctx context.Context, finishedBefore, forgetBefore time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE jobs SET expired = true, result = NULL, params = NULL, progress = NULL
		WHERE NOT expired AND status != 'running' AND finished < $1`, ms(finishedBefore))
	if err != nil {
		return 0, s.fail("expiring jobs", err)
	}
	n := int(tag.RowsAffected())
	if _, err := s.pool.Exec(ctx, `DELETE FROM jobs WHERE expired AND finished < $1`, ms(forgetBefore)); err != nil {
		return n, s.fail("forgetting expired jobs", err)
	}
	return n, nil
}
