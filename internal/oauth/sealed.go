package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Blobs is what [Sealed] needs of the shared store (the store package's
// Postgres has it): named opaque values, none read as nil, and UpdateBlob,
// which runs fn under a lock every process sharing the store honours and
// keeps what fn returns (nil: no change; an error: nothing changes).
type Blobs interface {
	Blob(ctx context.Context, name string) ([]byte, error)
	PutBlob(ctx context.Context, name string, value []byte) error
	DeleteBlob(ctx context.Context, name string) error
	UpdateBlob(ctx context.Context, name string, fn func(cur []byte) ([]byte, error)) error
	// BlobNames returns the names that start with prefix and hold a value.
	BlobNames(ctx context.Context, prefix string) ([]string, error)
}

// DefaultMaxAge is how long Sealed trusts a record it read.
const DefaultMaxAge = 2 * time.Second

// Sealed keeps records in a shared store (replicas), each sealed with
// Keys, whose key lives outside the store: the database alone gives no
// token away. Load answers from a cache at most MaxAge old, so that a
// request does not wait for the database; a record Update or Save wrote
// is seen at once by this process, and within MaxAge by the others (a
// token refreshed elsewhere is found sooner, under the lock, by the
// refresh a refused token starts). A record sealed with a previous key is
// sealed anew with the current one the next time it is written.
type Sealed struct {
	Blobs  Blobs
	Keys   *Keys
	MaxAge time.Duration // 0: DefaultMaxAge
	Now    func() time.Time

	mu    sync.Mutex
	cache map[string]cachedSealed
}

type cachedSealed struct {
	at  time.Time
	rec *Record // nil: none
}

var _ Records = (*Sealed)(nil)

func blobName(key string) string { return "oauth.signin." + key }

func (s *Sealed) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Load implements [Records].
func (s *Sealed) Load(ctx context.Context, server string) (*Record, error) {
	maxAge := s.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	s.mu.Lock()
	c, ok := s.cache[server]
	s.mu.Unlock()
	if !ok || s.now().Sub(c.at) >= maxAge {
		blob, err := s.Blobs.Blob(ctx, blobName(server))
		if err != nil {
			return nil, fmt.Errorf("reading the sign-in of %q: %w", server, err)
		}
		rec, _, err := s.decode(server, blob)
		if err != nil {
			return nil, err
		}
		c = cachedSealed{at: s.now(), rec: rec}
		s.remember(server, c)
	}
	if c.rec == nil {
		return nil, ErrNoRecord
	}
	return c.rec, nil
}

func (s *Sealed) remember(server string, c cachedSealed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache == nil {
		s.cache = map[string]cachedSealed{}
	}
	s.cache[server] = c
}

// decode opens blob (nil: no record).
func (s *Sealed) decode(server string, blob []byte) (rec *Record, stale bool, err error) {
	if blob == nil {
		return nil, false, nil
	}
	plain, stale, err := s.Keys.open(server, blob)
	if err != nil {
		return nil, false, err
	}
	var r Record
	if err := json.Unmarshal(plain, &r); err != nil {
		return nil, false, fmt.Errorf("the stored sign-in of %q is not a sign-in (run mcpx logout %s): %w", server, server, err)
	}
	return &r, stale, nil
}

// encode seals r under its key (Record.Key), which the seal binds: a
// blob copied under another principal's name does not open.
func (s *Sealed) encode(r *Record) ([]byte, error) {
	plain, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return s.Keys.seal(r.Key(), plain), nil
}

// Save implements [Records].
func (s *Sealed) Save(ctx context.Context, r *Record) error {
	blob, err := s.encode(r)
	if err != nil {
		return err
	}
	if err := s.Blobs.PutBlob(ctx, blobName(r.Key()), blob); err != nil {
		return fmt.Errorf("saving the sign-in of %q: %w", r.Server, err)
	}
	s.remember(r.Key(), cachedSealed{at: s.now(), rec: r})
	return nil
}

// Delete implements [Records].
func (s *Sealed) Delete(ctx context.Context, server string) error {
	if err := s.Blobs.DeleteBlob(ctx, blobName(server)); err != nil {
		return fmt.Errorf("deleting the sign-in of %q: %w", server, err)
	}
	s.remember(server, cachedSealed{at: s.now()})
	return nil
}

// Update implements [Records]: fn runs under the server's row lock in
// the shared store. A record a previous key opened is sealed anew even
// when fn changes nothing.
func (s *Sealed) Update(ctx context.Context, server string, fn func(cur *Record) (*Record, error)) (*Record, error) {
	var out *Record
	err := s.Blobs.UpdateBlob(ctx, blobName(server), func(blob []byte) ([]byte, error) {
		cur, stale, err := s.decode(server, blob)
		if err != nil {
			return nil, err
		}
		next, err := fn(cur)
		if err != nil {
			return nil, err
		}
		if next == nil {
			out = cur
			if !stale {
				return nil, nil
			}
			next = cur
		}
		out = next
		return s.encode(next)
	})
	if err != nil {
		return nil, err
	}
	s.remember(server, cachedSealed{at: s.now(), rec: out})
	return out, nil
}

// PersonKeys implements [Lister].
func (s *Sealed) PersonKeys(ctx context.Context, server string) ([]string, error) {
	names, err := s.Blobs.BlobNames(ctx, blobName(personPrefix(server)))
	if err != nil {
		return nil, fmt.Errorf("listing the sign-ins of %q: %w", server, err)
	}
	keys := make([]string, 0, len(names))
	for _, n := range names {
		if key := strings.TrimPrefix(n, blobName("")); isPersonKey(server, key) {
			keys = append(keys, key)
		}
	}
	return keys, nil
}
