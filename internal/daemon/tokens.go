package daemon

import (
	"mcpx/internal/hosthttp"
	"mcpx/internal/hosttoken"
	"mcpx/internal/store"
)

var _ hosthttp.CheckingTokens = (*hosttoken.Shared)(nil)

// hostTokens returns the tokens an HTTP listener of c requires: file
// ("" for none required) as they are, or, when the config names a
// shared store, its default token and the store's named tokens.
func (c *core) hostTokens(file *hosttoken.HostTokens, shared bool) hosthttp.Tokens {
	switch {
	case file == nil:
		return nil // no token required (never a nil pointer in the interface)
	case !shared:
		return file
	}
	st, _ := c.store.(store.Tokens)
	return hosttoken.NewShared(file, st)
}
