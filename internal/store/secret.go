package store

import (
	"context"
	"fmt"
	"time"
)

// Secrets is a store that keeps small secrets every gateway sharing it
// reads alike: the key that seals a pending question's state, so that a
// retry sealed by one gateway opens on another.
type Secrets interface {
	// Secret returns the secret named name, made with gen and kept if
	// there is none yet. Of gateways racing to make it, one's is kept and
	// every one returns that.
	Secret(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error)
}

// Secret implements [Secrets]; the value is made before asking, so that
// one statement inserts it unless another gateway's is there.
func (s *Postgres) Secret(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error) {
	fresh, err := gen()
	if err != nil {
		return nil, fmt.Errorf("making the secret %q: %w", name, err)
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO secrets (name, value, created) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
		name, fresh, ms(time.Now())); err != nil {
		return nil, s.fail("keeping the secret "+name, err)
	}
	var v []byte
	if err := s.pool.QueryRow(ctx, `SELECT value FROM secrets WHERE name = $1`, name).Scan(&v); err != nil {
		return nil, s.fail("reading the secret "+name, err)
	}
	return v, nil
}
