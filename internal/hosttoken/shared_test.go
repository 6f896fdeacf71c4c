package hosttoken

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

func openShared(t *testing.T, url string) *store.Postgres {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := store.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Two replicas' tokens over one store: a named token kept through one
// store value opens the other replica at its first request; revoked, it
// is refused by both once tokenRecheck has passed; the default token
// works without the store; the token files of the dir count for nothing.
func TestSharedTokens(t *testing.T) {
	url := storetest.PostgresURL(t)
	stA, stB := openShared(t, url), openShared(t, url)
	defer stA.Close()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	fileTok, err := NamedToken(dir, "local")
	if err != nil {
		t.Fatal(err)
	}
	def := NewHostTokens("default-token", dir, nil)
	a, b := NewShared(def, stA), NewShared(def, stB)
	a.recheck, b.recheck = 200*time.Millisecond, 200*time.Millisecond

	check := func(st *Shared, tok, wantName string, wantOK bool) {
		t.Helper()
		name, ok, err := st.Check(tok)
		if err != nil || ok != wantOK || name != wantName {
			t.Errorf("Check: %q %v %v, want %q %v", name, ok, err, wantName, wantOK)
		}
	}
	check(a, "default-token", "", true)
	check(a, fileTok, "", false) // a file in the dir is no token of a replica's
	check(a, "", "", false)
	if err := stA.PutToken(t.Context(), "alice", store.TokenHash("alice-token")); err != nil {
		t.Fatal(err)
	}
	check(b, "alice-token", "alice", true)
	check(a, "alice-token", "alice", true)
	check(b, "alice-token", "alice", true) // from what b knows
	if _, err := stB.RevokeToken(t.Context(), "alice"); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	for _, st := range []*Shared{a, b} {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, ok, _ := st.Check("alice-token"); !ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("a revoked token is still taken 10 s later")
			}
		}
	}
	if took := time.Since(revoked); took > time.Second {
		t.Errorf("the revocation took %v to reach both, with a recheck of 200ms", took)
	}

	// The store gone: a token checked a moment ago stands for the stale
	// time, any other cannot be told (an error, not a refusal); the
	// default token is untouched.
	if err := stB.PutToken(t.Context(), "bob", store.TokenHash("bob-token")); err != nil {
		t.Fatal(err)
	}
	check(b, "bob-token", "bob", true)
	stB.Close()
	b.recheck = 0 // every check asks the store, and fails
	check(b, "bob-token", "bob", true)
	if _, ok, err := b.Check("carol-token"); ok || err == nil {
		t.Errorf("an unknown token with the store closed: %v %v, want an error", ok, err)
	}
	check(b, "default-token", "", true)
	b.stale = 0
	if _, ok, err := b.Check("bob-token"); ok || err == nil {
		t.Errorf("a token past its stale time with the store closed: %v %v, want an error", ok, err)
	}
	none := NewShared(def, nil)
	if _, _, err := none.Check("alice-token"); !errors.Is(err, errNoSharedStore) {
		t.Errorf("no store: %v", err)
	}
	check(none, "default-token", "", true)
}
