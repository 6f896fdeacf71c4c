package hosttoken

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"mcpx/internal/store"
)

// Named host tokens of replicas, as the CLI mints, revokes and lists
// them: when the config names a shared store (mcpx.store, PostgreSQL),
// the store holds each named token's hash and every replica accepts
// exactly the tokens it holds. The token itself is kept only where it
// was minted: in the token dir, as without a store. These open the store
// themselves: a replica run by `mcpx serve --http` has no socket to ask.

// storeOpenTimeout bounds the wait for the shared store's server.
const storeOpenTimeout = 15 * time.Second

// withStore runs fn with the shared store at url.
func withStore(ctx context.Context, url string, fn func(store.Tokens) error) error {
	ctx, cancel := context.WithTimeout(ctx, storeOpenTimeout)
	defer cancel()
	st, err := store.OpenPostgres(ctx, url)
	if err != nil {
		return fmt.Errorf("the named tokens of replicas live in the shared store: %w", err)
	}
	defer st.Close()
	return fn(st)
}

// ErrTokenTaken is store.ErrTokenTaken, for the CLI, which reaches the
// store only through this package or the daemon: the shared store holds
// another token of that name.
var ErrTokenTaken = store.ErrTokenTaken

// MintShared returns the token named name, minting it in dir first if
// this machine has none (minted), and makes sure the shared store at url
// holds it. A name the store holds another token for is refused with
// ErrTokenTaken, and a token minted for it here is removed again.
func MintShared(ctx context.Context, url, dir, name string) (tok string, minted bool, err error) {
	file := filepath.Join(dir, name)
	_, statErr := os.Lstat(file)
	minted = errors.Is(statErr, fs.ErrNotExist)
	tok, err = NamedToken(dir, name)
	if err != nil {
		return "", minted, err
	}
	err = withStore(ctx, url, func(st store.Tokens) error { return st.PutToken(ctx, name, store.TokenHash(tok)) })
	if err == nil {
		return tok, minted, nil
	}
	if minted {
		_ = os.Remove(file) // the store did not take it: no one accepts it
	}
	return "", minted, err
}

// RevokeShared revokes the token named name in the shared store at url,
// and removes this machine's copy in dir if there is one. ErrNoToken if
// neither had it.
func RevokeShared(ctx context.Context, url, dir, name string) error {
	var had bool
	err := withStore(ctx, url, func(st store.Tokens) error {
		var err error
		had, err = st.RevokeToken(ctx, name)
		return err
	})
	if err != nil {
		return err
	}
	err = RevokeToken(dir, name)
	switch {
	case errors.Is(err, ErrNoToken) && !had:
		return err
	case errors.Is(err, ErrNoToken):
		return nil
	}
	return err
}

// ListShared lists the named tokens of the shared store at url.
func ListShared(ctx context.Context, url string) ([]TokenInfo, error) {
	var infos []TokenInfo
	err := withStore(ctx, url, func(st store.Tokens) error {
		list, err := st.ListTokens(ctx)
		for _, t := range list {
			infos = append(infos, TokenInfo{Name: t.Name, Created: t.Created})
		}
		return err
	})
	return infos, err
}
