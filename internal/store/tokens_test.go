package store_test

import (
	"errors"
	"strings"
	"testing"

	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// Named host tokens kept by one gateway are found by another, by the
// token's hash; a name keeps one token until revoked; the table holds
// hashes only.
func TestPostgresTokens(t *testing.T) {
	url := storetest.PostgresURL(t)
	a, b := openPG(t, url), openPG(t, url)
	defer a.Close()
	defer b.Close()
	ctx := t.Context()
	alice, other := store.TokenHash("alice-token"), store.TokenHash("another-token")
	if err := a.PutToken(ctx, "alice", alice); err != nil {
		t.Fatal(err)
	}
	if err := a.PutToken(ctx, "alice", alice); err != nil {
		t.Errorf("keeping the same token again: %v, want no change", err)
	}
	if err := b.PutToken(ctx, "alice", other); !errors.Is(err, store.ErrTokenTaken) {
		t.Errorf("another token under alice's name: %v, want ErrTokenTaken", err)
	}
	if err := b.PutToken(ctx, "bob", alice); err == nil || !strings.Contains(err.Error(), "another name") {
		t.Errorf("alice's token under another name: %v, want refused", err)
	}
	if err := b.PutToken(ctx, "", alice); err == nil {
		t.Error("a token with no name was kept")
	}
	if err := b.PutToken(ctx, "short", []byte("abc")); err == nil {
		t.Error("a hash that is no SHA-256 was kept")
	}
	if name, ok, err := b.TokenByHash(ctx, alice); name != "alice" || !ok || err != nil {
		t.Errorf("TokenByHash on the other gateway: %q %v %v", name, ok, err)
	}
	if _, ok, err := b.TokenByHash(ctx, other); ok || err != nil {
		t.Errorf("TokenByHash of no token: %v %v", ok, err)
	}
	list, err := b.ListTokens(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "alice" || list[0].Created.IsZero() {
		t.Errorf("ListTokens: %+v %v", list, err)
	}
	var n int
	if err := storetest.QueryRow(t, url, `SELECT count(*) FROM host_tokens WHERE hash = sha256('alice-token'::bytea)`, &n); err != nil || n != 1 {
		t.Errorf("the row holds %d SHA-256 of the token (%v), want 1", n, err)
	}
	if ok, err := b.RevokeToken(ctx, "alice"); !ok || err != nil {
		t.Fatalf("RevokeToken: %v %v", ok, err)
	}
	if _, ok, _ := a.TokenByHash(ctx, alice); ok {
		t.Error("a revoked token is still found")
	}
	if ok, err := a.RevokeToken(ctx, "alice"); ok || err != nil {
		t.Errorf("revoking twice: %v %v, want not found", ok, err)
	}
	if err := a.PutToken(ctx, "alice", other); err != nil {
		t.Errorf("minting alice again after her revocation: %v", err)
	}
}
