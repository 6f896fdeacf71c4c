package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The PostgreSQL schema is versioned: migrations[i] takes it from version
// i to i+1, and the table mcpx_schema holds the version reached. They are
// a few statements, applied in order at start in one transaction that
// holds an advisory lock: of several gateways starting at once, one
// migrates and the others wait for it, then find nothing to do. A
// migration library would bring its own lock and file layout for what
// is, here, a list of strings.
var migrations = []string{
	// 1: the jobs table, as SQLite's (times in Unix milliseconds).
	`CREATE TABLE jobs (
		id          text PRIMARY KEY,
		principal   text NOT NULL,
		server      text NOT NULL,
		tool        text NOT NULL,
		key         text NOT NULL,
		params      bytea,
		idempotent  boolean NOT NULL,
		status      text NOT NULL,
		attempt     integer NOT NULL,
		owner       text NOT NULL,
		lease_until bigint NOT NULL,
		progress    bytea,
		result      bytea,
		error       text NOT NULL,
		note        text NOT NULL,
		created     bigint NOT NULL,
		updated     bigint NOT NULL,
		finished    bigint NOT NULL DEFAULT 0,
		expired     boolean NOT NULL DEFAULT false
	);
	CREATE INDEX jobs_running ON jobs (status, principal, key);
	CREATE INDEX jobs_owner ON jobs (owner) WHERE status = 'running';
	CREATE INDEX jobs_finished ON jobs (finished);`,
	// 2: shared secrets (see Secret).
	`CREATE TABLE secrets (
		name    text PRIMARY KEY,
		value   bytea NOT NULL,
		created bigint NOT NULL
	);`,
	// 3: named blobs, opaque and sealed by their writer (see Postgres.UpdateBlob).
	`CREATE TABLE blobs (
		name    text PRIMARY KEY,
		value   bytea,
		updated bigint NOT NULL
	);`,
	// 4: named host tokens, by the SHA-256 of the token (see PutToken).
	`CREATE TABLE host_tokens (
		name    text PRIMARY KEY,
		hash    bytea NOT NULL UNIQUE,
		created bigint NOT NULL
	);`,
	// 5: the gateways sharing the store, by their heartbeats (see Beat).
	`CREATE TABLE replicas (
		owner   text PRIMARY KEY,
		address text NOT NULL,
		host    text NOT NULL,
		pid     integer NOT NULL,
		version text NOT NULL,
		started bigint NOT NULL,
		seen    bigint NOT NULL
	);`,
	// 6: the end of a call whose lease another gateway took meanwhile
	// (see KeepLate).
	`ALTER TABLE jobs ADD COLUMN late_status text NOT NULL DEFAULT '',
		ADD COLUMN late_result bytea,
		ADD COLUMN late_error text NOT NULL DEFAULT '',
		ADD COLUMN late_at bigint NOT NULL DEFAULT 0;`,
	// 7: the audit log (see Audit).
	`CREATE TABLE audit (
		id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		at          bigint NOT NULL,
		kind        text NOT NULL,
		principal   text NOT NULL,
		name        text NOT NULL,
		groups      text NOT NULL,
		host        text NOT NULL,
		face        text NOT NULL,
		server      text NOT NULL,
		tool        text NOT NULL,
		action      text NOT NULL,
		outcome     text NOT NULL,
		detail      text NOT NULL,
		duration_ms bigint NOT NULL,
		job         text NOT NULL,
		replica     text NOT NULL,
		args_sha256 text NOT NULL
	);
	CREATE INDEX audit_at ON audit (at);
	CREATE INDEX audit_principal ON audit (principal, at);
	CREATE INDEX audit_name ON audit (name, at);
	CREATE INDEX audit_tool ON audit (tool, at);`,
	// 8: a job's principal as the audit log names it (see Job.Name).
	`ALTER TABLE jobs ADD COLUMN who_name text NOT NULL DEFAULT '',
		ADD COLUMN who_groups text NOT NULL DEFAULT '',
		ADD COLUMN who_client text NOT NULL DEFAULT '';`,
}

// SchemaVersion is the schema version this build brings a store to.
var SchemaVersion = len(migrations)

// migrateLock is the advisory lock key the migrations run under (any
// constant; "mcpx" in ASCII).
const migrateLock = 0x6d637078

// migrate brings the schema up to SchemaVersion. A store whose version is
// newer than this build's is refused: an older gateway must not write
// rows it does not understand.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS mcpx_schema (version integer NOT NULL)`); err != nil {
			return err
		}
		var version int
		err := tx.QueryRow(ctx, `SELECT version FROM mcpx_schema`).Scan(&version)
		switch {
		case err == pgx.ErrNoRows:
			if _, err := tx.Exec(ctx, `INSERT INTO mcpx_schema (version) VALUES (0)`); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		if version > len(migrations) {
			return fmt.Errorf("the store's schema is at version %d, newer than this mcpx's %d: upgrade mcpx", version, len(migrations))
		}
		for v := version; v < len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migration %d: %w", v+1, err)
			}
		}
		if version < len(migrations) {
			_, err = tx.Exec(ctx, `UPDATE mcpx_schema SET version = $1`, len(migrations))
		}
		return err
	})
}

// checkSchema refuses a store no mcpx has used and one whose schema is
// newer than this build's, changing nothing; an older one is read as it
// is.
func checkSchema(ctx context.Context, pool *pgxpool.Pool) error {
	var version int
	err := pool.QueryRow(ctx, `SELECT version FROM mcpx_schema`).Scan(&version)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "42P01", errors.Is(err, pgx.ErrNoRows): // undefined_table: no mcpx used it yet
	case err != nil:
		return err
	}
	switch {
	case version == 0:
		return errors.New("no mcpx has used this store yet (the first gateway to start makes its schema)")
	case version > SchemaVersion:
		return fmt.Errorf("the store's schema is at version %d, newer than this mcpx's %d: upgrade mcpx", version, SchemaVersion)
	}
	return nil
}
