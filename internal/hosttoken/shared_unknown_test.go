package hosttoken

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"mcpx/internal/store"
)

// countingTokens is a store's tokens that has one named token, counting
// its lookups: the seam under Shared.
type countingTokens struct {
	store.Tokens // the other methods are not called
	lookups      atomic.Int64
}

func (c *countingTokens) TokenByHash(_ context.Context, hash []byte) (string, bool, error) {
	c.lookups.Add(1)
	if string(hash) == string(store.TokenHash("ci-token")) {
		return "ci", true, nil
	}
	return "", false, nil
}

// TestUnknownTokenCache: a token the store does not have (a person's
// opaque access token, presented on every request) is looked up once per
// tokenUnknown, not per request; a named token still opens at once; at
// most tokenUnknownMax unknown tokens are remembered.
func TestUnknownTokenCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &countingTokens{}
		tokens := NewShared(NewHostTokens("default-token", t.TempDir(), nil), st)
		for range 50 {
			if _, ok, err := tokens.Check("person-opaque-token"); ok || err != nil {
				t.Fatalf("an unknown token: ok %v, %v", ok, err)
			}
		}
		if n := st.lookups.Load(); n != 1 {
			t.Errorf("50 requests with one unknown token made %d store lookups, want 1", n)
		}
		if name, ok, err := tokens.Check("ci-token"); !ok || err != nil || name != "ci" {
			t.Errorf("a named token: %q %v %v", name, ok, err)
		}
		time.Sleep(tokenUnknown)
		tokens.Check("person-opaque-token")
		if n := st.lookups.Load(); n != 3 {
			t.Errorf("after tokenUnknown the unknown token was looked up again: %d lookups in all, want 3", n)
		}
		for i := range tokenUnknownMax + 10 {
			tokens.Check("flood-" + strconv.Itoa(i))
		}
		tokens.mu.Lock()
		n := len(tokens.unknown)
		tokens.mu.Unlock()
		if n > tokenUnknownMax {
			t.Errorf("%d unknown tokens remembered, at most %d", n, tokenUnknownMax)
		}
	})
}
