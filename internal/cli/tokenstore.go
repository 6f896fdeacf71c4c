package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/store"
)

// Named host tokens of replicas: when the config names a shared store
// (mcpx.store, PostgreSQL), the store holds each named token's hash and
// every replica accepts exactly the tokens it holds. The token itself is
// printed once, and kept only where it was minted: in the token dir, as
// without a store, so that `mcpx token --name` prints it again there and
// `mcpx install --http` writes it into a host's config. The CLI reaches
// the store itself: a replica run by `mcpx serve --http` has no socket to
// ask.

// storeOpenTimeout bounds the wait for the shared store's server.
const storeOpenTimeout = 15 * time.Second

// withTokenStore runs fn with the shared store cfg names.
func withTokenStore(ctx context.Context, cfg *config.Config, fn func(store.Tokens) error) error {
	ctx, cancel := context.WithTimeout(ctx, storeOpenTimeout)
	defer cancel()
	st, err := store.OpenPostgres(ctx, cfg.Store)
	if err != nil {
		return fmt.Errorf("the named tokens of replicas live in the shared store: %w", err)
	}
	defer st.Close()
	return fn(st)
}

// sharedNamedToken returns the token named name, minting it first if
// this machine has none, and makes sure the shared store holds it. A
// name the store holds another token for is refused, and a token minted
// for it here is removed again.
func sharedNamedToken(ctx context.Context, cfg *config.Config, dir, name string) (string, error) {
	file := filepath.Join(dir, name)
	_, statErr := os.Lstat(file)
	minted := errors.Is(statErr, fs.ErrNotExist)
	tok, err := config.NamedToken(dir, name)
	if err != nil {
		return "", err
	}
	err = withTokenStore(ctx, cfg, func(st store.Tokens) error { return st.PutToken(ctx, name, store.TokenHash(tok)) })
	if err == nil {
		return tok, nil
	}
	if minted {
		_ = os.Remove(file) // the store did not take it: no one accepts it
	}
	if errors.Is(err, store.ErrTokenTaken) {
		where := "on another machine (its value is kept only where it was minted)"
		if !minted {
			where = "elsewhere since this machine's copy was minted: that copy is revoked"
		}
		return "", &exitError{code: ExitUsage, err: fmt.Errorf("the shared store holds another token named %q, minted %s; use another name, or mcpx token --revoke %s and mint it again", name, where, name)}
	}
	return "", err
}

// namedTokenFor is the token named name as cfg's HTTP faces accept it:
// from the shared store's if cfg names one, else the token dir's.
func namedTokenFor(ctx context.Context, cfg *config.Config, dir, name string) (string, error) {
	if cfg.Store != "" {
		return sharedNamedToken(ctx, cfg, dir, name)
	}
	return config.NamedToken(dir, name)
}

// revokeShared revokes the token named name in the shared store, and
// removes this machine's copy if there is one. config.ErrNoToken if
// neither had it.
func revokeShared(ctx context.Context, cfg *config.Config, dir, name string) error {
	var had bool
	err := withTokenStore(ctx, cfg, func(st store.Tokens) error {
		var err error
		had, err = st.RevokeToken(ctx, name)
		return err
	})
	if err != nil {
		return err
	}
	err = config.RevokeToken(dir, name)
	switch {
	case errors.Is(err, config.ErrNoToken) && !had:
		return err
	case errors.Is(err, config.ErrNoToken):
		return nil
	}
	return err
}

// listShared lists the shared store's named tokens.
func listShared(ctx context.Context, cfg *config.Config) ([]config.TokenInfo, error) {
	var infos []config.TokenInfo
	err := withTokenStore(ctx, cfg, func(st store.Tokens) error {
		list, err := st.ListTokens(ctx)
		for _, t := range list {
			infos = append(infos, config.TokenInfo{Name: t.Name, Created: t.Created})
		}
		return err
	})
	return infos, err
}
