package cli

import (
	"context"
	"errors"
	"fmt"

	"mcpx/internal/config"
	"mcpx/internal/hosttoken"
)

// Named host tokens of replicas: when the config names a shared store
// (mcpx.store), hosttoken keeps each named token's hash there, and the
// token itself only where it was minted, so that `mcpx token --name`
// prints it again there and `mcpx install --http` writes it into a host's
// config.

// namedTokenFor is the token named name as cfg's HTTP faces accept it:
// from the shared store's if cfg names one, else the token dir's.
func namedTokenFor(ctx context.Context, cfg *config.Config, dir, name string) (string, error) {
	if cfg.Store == "" {
		return hosttoken.NamedToken(dir, name)
	}
	tok, minted, err := hosttoken.MintShared(ctx, cfg.Store, dir, name)
	if errors.Is(err, hosttoken.ErrTokenTaken) {
		where := "on another machine (its value is kept only where it was minted)"
		if !minted {
			where = "elsewhere since this machine's copy was minted: that copy is revoked"
		}
		return "", &exitError{code: ExitUsage, err: fmt.Errorf("the shared store holds another token named %q, minted %s; use another name, or mcpx token --revoke %s and mint it again", name, where, name)}
	}
	return tok, err
}
