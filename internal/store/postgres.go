package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
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
	jobsSQL
	pgDB
	channel string // the NOTIFY channel of cancels in this schema
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
	return openPostgres(ctx, rawURL, migrate)
}

// OpenPostgresAsIs is OpenPostgres for a gateway that only looks: it
// never migrates; it refuses a store no mcpx has used and one newer than
// this build's, and reads an older one as it is.
func OpenPostgresAsIs(ctx context.Context, rawURL string) (*Postgres, error) {
	return openPostgres(ctx, rawURL, checkSchema)
}

func openPostgres(ctx context.Context, rawURL string, schemaStep func(context.Context, *pgxpool.Pool) error) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("opening the job store: %w", errBadURL)
	}
	where := connWhere(cfg.ConnConfig)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, &UnavailableError{Where: where, Err: err}
	}
	s := &Postgres{pgDB: pgDB{pool: pool, where: where}}
	s.jobsSQL = jobsSQL{db: s.pgDB, q: pgStatements()}
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		pool.Close()
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) {
			// Not the server's answer: it was not reached, or did not
			// finish its handshake in time (loaded, or cut off after the
			// connect). A deadline here is the store's, not a caller's.
			return nil, fmt.Errorf("opening the job store: %w", &UnavailableError{Where: where, Err: err})
		}
		return nil, s.fail("opening the job store", err)
	}
	s.channel = "mcpx_cancel_" + schema
	if len(s.channel) > 63 {
		s.channel = s.channel[:63]
	}
	if err := schemaStep(ctx, pool); err != nil {
		pool.Close()
		return nil, s.fail("the job store's schema", err)
	}
	return s, nil
}

// errBadURL replaces pgx's error for a URL that does not parse, which may
// quote the URL, password and all.
var errBadURL = errors.New("the PostgreSQL URL is not valid (postgres://user:password@host:port/database)")

// connWhere names c's server and database, without credentials, for
// errors, and bounds its connect at 5 s unless the URL says otherwise.
func connWhere(c *pgx.ConnConfig) string {
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = 5 * time.Second
	}
	return fmt.Sprintf("%s:%d/%s", c.Host, c.Port, c.Database)
}

// Where names the server and database, without credentials.
func (s *Postgres) Where() string { return s.where }

// Close closes the pool.
func (s *Postgres) Close() error {
	s.pool.Close()
	return nil
}

// pgNow is the server's clock in Unix milliseconds.
const pgNow = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"

// pgStatements are built on first use: a process that opens no
// PostgreSQL store does not pay for them at start-up.
var pgStatements = sync.OnceValue(func() *statements {
	return newStatements(numbered, "NULL::bytea", pgNow, "id = ANY(?)")
})

// pgDB is pgx's pool as jobsSQL's dialect.
type pgDB struct {
	pool  *pgxpool.Pool
	where string // host:port/database, for errors (no password)
}

func (d pgDB) exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := d.pool.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}

func (d pgDB) queryRow(ctx context.Context, q string, args ...any) scanner {
	return d.pool.QueryRow(ctx, q, args...)
}

func (d pgDB) query(ctx context.Context, q string, args []any, each func(scanner) error) error {
	rows, err := d.pool.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	return eachRow(rows, each)
}

func (pgDB) noRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

func (pgDB) list(ids []string) any {
	if ids == nil {
		return []string{}
	}
	return ids
}

// fail wraps err as what failed; a server that cannot be reached is an
// UnavailableError.
func (s pgDB) fail(what string, err error) error {
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
	tag, err := tx.Exec(ctx, s.q.cancel, cancelArgs(id, why)...)
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
