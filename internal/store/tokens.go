package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Tokens is a store that keeps the named bearer tokens of HTTP hosts for
// every gateway sharing it: a token made on one is accepted by all, and
// one revoked is refused by all. It keeps each token's SHA-256, never
// the token: whoever reads the store cannot present one.
type Tokens interface {
	// PutToken keeps the token named name, by its hash. A name that has
	// the same hash already is no change; one that has another is
	// refused with ErrTokenTaken (a name is revoked before it is minted
	// again).
	PutToken(ctx context.Context, name string, hash []byte) error
	// RevokeToken forgets the token named name; ok is false if there was
	// none.
	RevokeToken(ctx context.Context, name string) (ok bool, err error)
	// TokenByHash returns the name of the token whose hash is hash; ok is
	// false if none has it.
	TokenByHash(ctx context.Context, hash []byte) (name string, ok bool, err error)
	// ListTokens returns every token, by name, without its hash.
	ListTokens(ctx context.Context) ([]HostToken, error)
}

// HostToken is one named token as ListTokens returns it.
type HostToken struct {
	Name    string
	Created time.Time
}

// ErrTokenTaken: the name has another token.
var ErrTokenTaken = errors.New("the name has another token")

// TokenHash is what a Tokens store keeps of tok.
func TokenHash(tok string) []byte {
	sum := sha256.Sum256([]byte(tok))
	return sum[:]
}

func (s *Postgres) PutToken(ctx context.Context, name string, hash []byte) error {
	if name == "" || len(hash) != sha256.Size {
		return errors.New("keeping a token: it needs a name and a SHA-256")
	}
	what := fmt.Sprintf("keeping token %q", name)
	tag, err := s.pool.Exec(ctx, `INSERT INTO host_tokens (name, hash, created) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		name, hash, ms(time.Now()))
	if err != nil {
		return s.fail(what, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var same bool
	err = s.pool.QueryRow(ctx, `SELECT hash = $2 FROM host_tokens WHERE name = $1`, name, hash).Scan(&same)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		// The conflict was on the hash: the same token under another
		// name (a 256-bit token is never minted twice by chance).
		return fmt.Errorf("%s: another name has this token", what)
	case err != nil:
		return s.fail(what, err)
	case !same:
		return fmt.Errorf("%s: %w", what, ErrTokenTaken)
	}
	return nil
}

func (s *Postgres) RevokeToken(ctx context.Context, name string) (bool, error) {
	return s.changed(ctx, fmt.Sprintf("revoking token %q", name), `DELETE FROM host_tokens WHERE name = $1`, name)
}

func (s *Postgres) TokenByHash(ctx context.Context, hash []byte) (string, bool, error) {
	var name string
	err := s.pool.QueryRow(ctx, `SELECT name FROM host_tokens WHERE hash = $1`, hash).Scan(&name)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, s.fail("checking a token", err)
	}
	return name, true, nil
}

func (s *Postgres) ListTokens(ctx context.Context) ([]HostToken, error) {
	rows, err := s.pool.Query(ctx, `SELECT name, created FROM host_tokens ORDER BY name`)
	if err != nil {
		return nil, s.fail("listing tokens", err)
	}
	var out []HostToken
	for rows.Next() {
		var t HostToken
		var created int64
		if err := rows.Scan(&t.Name, &created); err != nil {
			rows.Close()
			return nil, s.fail("listing tokens", err)
		}
		t.Created = fromMs(created)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("listing tokens", err)
	}
	return out, nil
}
