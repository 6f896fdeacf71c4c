package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Record is one server's sign-in: where the token is for, who issued it,
// the client mcpx registered, and the tokens. It is stored as one JSON
// file, mode 0600, or sealed in the shared store, and never logged.
type Record struct {
	Server    string         `json:"server"`
	ServerURL string         `json:"serverUrl"` // the configured URL
	Resource  string         `json:"resource"`  // the RFC 8707 resource the token is for
	Metadata  ServerMetadata `json:"authorizationServer"`
	Client    Registration   `json:"client"`
	Scopes    []string       `json:"scopes,omitempty"` // requested (step-up adds to them)
	Token     Token          `json:"token"`
	SignedIn  time.Time      `json:"signedIn"`
	// Principal is the ID of the principal whose own sign-in this is (a
	// per-person server's); "" for the server's shared one.
	Principal string `json:"principal,omitempty"`
	// Refused is set once the authorization server refused the refresh
	// token: the sign-in has ended, and no one tries the token again.
	Refused *Refusal `json:"refused,omitempty"`
}

// Refusal is when and why the refresh token was refused.
type Refusal struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

// Token is an access token and what came with it.
type Token struct {
	AccessToken  string    `json:"accessToken"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"` // zero: the server gave none
	Scope        string    `json:"scope,omitempty"` // granted, as the server said
	Obtained     time.Time `json:"obtained,omitzero"`
}

// due is when the token is to be refreshed: ahead of its expiry, or a
// quarter of its lifetime ahead when that is shorter (a token that lives
// a minute is not refreshed at once); zero when it has no expiry.
func (t Token) due(ahead time.Duration) time.Time {
	if t.Expiry.IsZero() {
		return time.Time{}
	}
	if !t.Obtained.IsZero() {
		ahead = min(ahead, t.Expiry.Sub(t.Obtained)/4)
	}
	return t.Expiry.Add(-ahead)
}

// String never shows a token.
func (t Token) String() string { return "oauth.Token{redacted}" }

// GoString never shows a token.
func (t Token) GoString() string { return t.String() }

// Store keeps records in a directory, one file per server: the records
// of a single machine, shared by its daemon and `mcpx login`. Load reads a
// file again once its modification time changed (a login or a refresh in
// another process); Update holds the server's file lock (flock).
type Store struct {
	Dir string

	mu    sync.Mutex
	cache map[string]cachedFile
}

type cachedFile struct {
	mod time.Time
	rec *Record
}

var _ Records = (*Store)(nil)

// ErrNoRecord: the server has no sign-in stored.
var ErrNoRecord = errors.New("not signed in")

func (s *Store) path(server string) string { return filepath.Join(s.Dir, server+".json") }

// Load implements [Records]: a stat per call, a read when the file changed.
func (s *Store) Load(_ context.Context, server string) (*Record, error) {
	fi, err := os.Stat(s.path(server))
	if errors.Is(err, fs.ErrNotExist) {
		s.forget(server)
		return nil, ErrNoRecord
	}
	if err != nil {
		return nil, fmt.Errorf("reading the sign-in of %q: %w", server, err)
	}
	s.mu.Lock()
	c, ok := s.cache[server]
	s.mu.Unlock()
	if ok && c.mod.Equal(fi.ModTime()) {
		return c.rec, nil
	}
	rec, err := s.read(server)
	if err != nil {
		return nil, err
	}
	s.remember(server, fi.ModTime(), rec)
	return rec, nil
}

func (s *Store) read(server string) (*Record, error) {
	data, err := os.ReadFile(s.path(server))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoRecord
	}
	if err != nil {
		return nil, fmt.Errorf("reading the sign-in of %q: %w", server, err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("the sign-in file of %q is not valid JSON (delete it with mcpx logout): %w", server, err)
	}
	return &r, nil
}

func (s *Store) remember(server string, mod time.Time, rec *Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache == nil {
		s.cache = map[string]cachedFile{}
	}
	s.cache[server] = cachedFile{mod: mod, rec: rec}
}

func (s *Store) forget(server string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cache, server)
}

// Save implements [Records]: the record written atomically (a 0600
// temporary file renamed over the old one) in a 0700 directory.
func (s *Store) Save(_ context.Context, r *Record) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("creating the sign-in directory: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	key := r.Key()
	f, err := os.CreateTemp(s.Dir, "."+key+".*.tmp")
	if err != nil {
		return fmt.Errorf("saving the sign-in of %q: %w", r.Server, err)
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("saving the sign-in of %q: %w", r.Server, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), s.path(key)); err != nil {
		return fmt.Errorf("saving the sign-in of %q: %w", r.Server, err)
	}
	s.forget(key)
	return nil
}

// Delete implements [Records].
func (s *Store) Delete(_ context.Context, server string) error {
	s.forget(server)
	err := os.Remove(s.path(server))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Update implements [Records] under the server's file lock.
func (s *Store) Update(ctx context.Context, server string, fn func(cur *Record) (*Record, error)) (*Record, error) {
	unlock, err := s.lock(server)
	if err != nil {
		return nil, fmt.Errorf("locking the sign-in of %q: %w", server, err)
	}
	defer unlock()
	cur, err := s.read(server)
	if errors.Is(err, ErrNoRecord) {
		cur, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	next, err := fn(cur)
	if err != nil {
		return nil, err
	}
	if next == nil {
		return cur, nil
	}
	if err := s.Save(ctx, next); err != nil {
		return nil, err
	}
	return next, nil
}

// lock takes the server's exclusive file lock, across processes, and
// returns its release.
func (s *Store) lock(server string) (func(), error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, "."+server+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// PersonKeys implements [Lister]: the files of server's per-person records.
func (s *Store) PersonKeys(_ context.Context, server string) ([]string, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing the sign-ins: %w", err)
	}
	var keys []string
	for _, e := range ents {
		if key, ok := strings.CutSuffix(e.Name(), ".json"); ok && isPersonKey(server, key) {
			keys = append(keys, key)
		}
	}
	return keys, nil
}
