package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrBlobTooLarge: a value over MaxBlobBytes.
var ErrBlobTooLarge = errors.New("the value is over the blob limit")

// MaxBlobBytes bounds one blob: they are small (a sealed sign-in is a
// few kilobytes).
const MaxBlobBytes = 1 << 20

// Blob returns the value named name, or nil when there is none.
func (s *Postgres) Blob(ctx context.Context, name string) ([]byte, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, `SELECT value FROM blobs WHERE name = $1`, name).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.fail("reading the blob "+name, err)
	}
	return v, nil
}

// PutBlob sets name's value.
func (s *Postgres) PutBlob(ctx context.Context, name string, value []byte) error {
	if len(value) > MaxBlobBytes {
		return fmt.Errorf("keeping the blob %s: %w (%d bytes)", name, ErrBlobTooLarge, len(value))
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO blobs (name, value, updated) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated = excluded.updated`, name, value, ms(time.Now()))
	if err != nil {
		return s.fail("keeping the blob "+name, err)
	}
	return nil
}

// DeleteBlob removes name's value; none is no error. The row stays,
// without a value: it is the name's lock (see UpdateBlob).
func (s *Postgres) DeleteBlob(ctx context.Context, name string) error {
	if _, err := s.pool.Exec(ctx, `UPDATE blobs SET value = NULL, updated = $2 WHERE name = $1`, name, ms(time.Now())); err != nil {
		return s.fail("deleting the blob "+name, err)
	}
	return nil
}

// UpdateBlob calls fn with name's value (nil when none) while holding
// name's lock across every gateway sharing the store, and sets the value
// fn returns unless it returns nil (no change). An error from fn changes
// nothing and is returned. The lock is held until fn returns: fn bounds
// its own work by ctx. The lock is the name's row, locked FOR UPDATE in a
// transaction that lasts as long as fn (a row made, without a value, when
// the name has none: a lock on a row that does not exist would lock
// nothing).
func (s *Postgres) UpdateBlob(ctx context.Context, name string, fn func(cur []byte) ([]byte, error)) error {
	if _, err := s.pool.Exec(ctx, `INSERT INTO blobs (name, value, updated) VALUES ($1, NULL, $2) ON CONFLICT (name) DO NOTHING`,
		name, ms(time.Now())); err != nil {
		return s.fail("locking the blob "+name, err)
	}
	var fnErr error
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var cur []byte
		if err := tx.QueryRow(ctx, `SELECT value FROM blobs WHERE name = $1 FOR UPDATE`, name).Scan(&cur); err != nil {
			return err
		}
		next, err := fn(cur)
		if err != nil {
			fnErr = err
			return err
		}
		if next == nil {
			return nil
		}
		if len(next) > MaxBlobBytes {
			fnErr = fmt.Errorf("keeping the blob %s: %w (%d bytes)", name, ErrBlobTooLarge, len(next))
			return fnErr
		}
		_, err = tx.Exec(ctx, `UPDATE blobs SET value = $2, updated = $3 WHERE name = $1`, name, next, ms(time.Now()))
		return err
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return s.fail("updating the blob "+name, err)
	}
	return nil
}

// BlobNames returns the names that start with prefix and hold a value.
func (s *Postgres) BlobNames(ctx context.Context, prefix string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT name FROM blobs WHERE starts_with(name, $1) AND value IS NOT NULL ORDER BY name`, prefix)
	if err != nil {
		return nil, s.fail("listing the blobs "+prefix, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, s.fail("listing the blobs "+prefix, err)
	}
	return names, nil
}
