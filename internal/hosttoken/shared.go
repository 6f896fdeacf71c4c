package hosttoken

import (
	"context"
	"errors"
	"sync"
	"time"

	"mcpx/internal/store"
)

// How long a named token found in the shared store is taken without
// asking the store again (a token revoked on any replica is refused by
// every replica at most this long after), and how much longer it is
// still taken while the store cannot be reached.
const (
	tokenRecheck = 2 * time.Second
	tokenStale   = time.Minute
	// tokenLookups bounds the store lookups in flight: a flood of wrong
	// tokens waits for them and never takes the store's whole pool.
	tokenLookups = 4
	// tokenWait bounds a lookup, its wait for a turn included.
	tokenWait = 2 * time.Second
	// tokenUnknown is how long a token the store does not have is
	// refused without asking it again (a person's access token, which
	// goes to the authorization server next, is presented on every
	// request); at most tokenUnknownMax are remembered. A named token is
	// random and new when minted: none is presented before it exists.
	tokenUnknown    = 10 * time.Second
	tokenUnknownMax = 10000
)

// Shared are a replica's bearer tokens: the default token (a file,
// as for a single mcpx) and the named tokens of the store every replica
// shares, which keeps their hashes. A token minted on any replica opens
// every replica from its first request (a token not known here is looked
// up); one revoked is refused by all within tokenRecheck. Safe for
// concurrent use.
type Shared struct {
	def *HostTokens  // the default token alone
	st  store.Tokens // nil: the store did not open
	// recheck and stale are tokenRecheck and tokenStale (tests shorten
	// them).
	recheck, stale time.Duration
	turns          chan struct{}

	mu    sync.Mutex
	known map[[32]byte]knownToken
	// unknown are tokens the store did not have, by when it said so.
	unknown map[[32]byte]time.Time
}

// knownToken is a named token the store had when last asked.
type knownToken struct {
	name    string
	checked time.Time
}

// errNoSharedStore: the config names a shared store that did not open.
var errNoSharedStore = errors.New("the shared store named by mcpx.store is not open (see the log): only the default token is accepted")

// NewShared returns the default token of def and the named tokens of st
// (nil: the store did not open, and only the default token opens).
func NewShared(def *HostTokens, st store.Tokens) *Shared {
	return &Shared{def: def.DefaultOnly(), st: st, recheck: tokenRecheck, stale: tokenStale,
		turns: make(chan struct{}, tokenLookups), known: map[[32]byte]knownToken{}, unknown: map[[32]byte]time.Time{}}
}

// Match is Check, taking "cannot tell" for no.
func (t *Shared) Match(tok string) (string, bool) {
	name, ok, err := t.Check(tok)
	return name, ok && err == nil
}

// Check returns "" for the default token, the name of a named one, ok
// false for a token that opens nothing, or an error when the store
// cannot be asked.
func (t *Shared) Check(tok string) (string, bool, error) {
	if tok == "" {
		return "", false, nil
	}
	if name, ok := t.def.Match(tok); ok {
		return name, true, nil
	}
	var hash [32]byte
	copy(hash[:], store.TokenHash(tok))
	now := time.Now()
	t.mu.Lock()
	k, found := t.known[hash]
	at, unknown := t.unknown[hash]
	t.mu.Unlock()
	if found && now.Sub(k.checked) < t.recheck {
		return k.name, true, nil
	}
	if unknown && now.Sub(at) < tokenUnknown {
		return "", false, nil
	}
	name, ok, err := t.lookup(hash[:])
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case err != nil && found && now.Sub(k.checked) < t.recheck+t.stale:
		return k.name, true, nil // the store is away: what it said a moment ago stands
	case err != nil:
		return "", false, err
	case !ok:
		delete(t.known, hash)
		t.noteUnknownLocked(hash, now)
		return "", false, nil
	}
	t.known[hash] = knownToken{name: name, checked: now}
	for h, k := range t.known { // forget tokens no longer presented
		if now.Sub(k.checked) > t.recheck+t.stale {
			delete(t.known, h)
		}
	}
	return name, true, nil
}

// noteUnknownLocked remembers that the store has no token of hash,
// forgetting those past tokenUnknown once tokenUnknownMax are kept, and,
// if as many are still recent, any one of them.
func (t *Shared) noteUnknownLocked(hash [32]byte, now time.Time) {
	if len(t.unknown) >= tokenUnknownMax {
		for h, at := range t.unknown {
			if now.Sub(at) >= tokenUnknown {
				delete(t.unknown, h)
			}
		}
		for h := range t.unknown {
			if len(t.unknown) < tokenUnknownMax {
				break
			}
			delete(t.unknown, h)
		}
	}
	t.unknown[hash] = now
}

// lookup asks the store for hash, waiting its turn among tokenLookups.
func (t *Shared) lookup(hash []byte) (string, bool, error) {
	if t.st == nil {
		return "", false, errNoSharedStore
	}
	ctx, cancel := context.WithTimeout(context.Background(), tokenWait)
	defer cancel()
	select {
	case t.turns <- struct{}{}:
		defer func() { <-t.turns }()
	case <-ctx.Done():
		return "", false, errors.New("too many bearer tokens are being checked at once")
	}
	return t.st.TokenByHash(ctx, hash)
}
