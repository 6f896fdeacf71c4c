package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Probe is what a look at a shared store found, without changing it.
type Probe struct {
	Where    string // host:port/database, no credentials
	Schema   int    // the schema version the store is at; 0 before any mcpx migrated it
	Replicas int    // gateways that announced themselves in the last minute
}

// ProbePostgres connects to the PostgreSQL server rawURL names and reads
// its schema version and the gateways that use it. It changes nothing:
// no migration runs, so a doctor can look at a store that a newer or
// older mcpx serves. Errors name the server, never the password.
func ProbePostgres(ctx context.Context, rawURL string) (Probe, error) {
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return Probe{}, errBadURL
	}
	p := Probe{Where: connWhere(cfg)}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return p, &UnavailableError{Where: p.Where, Err: err}
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var schema, replicas bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('mcpx_schema') IS NOT NULL, to_regclass('replicas') IS NOT NULL`).Scan(&schema, &replicas); err != nil {
		return p, fmt.Errorf("reading the job store's schema at %s: %w", p.Where, err)
	}
	if !schema {
		return p, nil
	}
	if err := conn.QueryRow(ctx, `SELECT version FROM mcpx_schema`).Scan(&p.Schema); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return p, fmt.Errorf("reading the job store's schema at %s: %w", p.Where, err)
	}
	if replicas {
		since := time.Now().Add(-time.Minute).UnixMilli()
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM replicas WHERE seen >= $1`, since).Scan(&p.Replicas); err != nil {
			return p, fmt.Errorf("reading the gateways of the job store at %s: %w", p.Where, err)
		}
	}
	return p, nil
}
