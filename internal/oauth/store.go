package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Record is one server's sign-in: where the token is for, who issued it,
// the client mcpx registered, and the tokens. It is stored as one JSON
// file, mode 0600, and never logged.
type Record struct {
	Server    string         `json:"server"`
	ServerURL string         `json:"serverUrl"` // the configured URL
	Resource  string         `json:"resource"`  // the RFC 8707 resource the token is for
	Metadata  ServerMetadata `json:"authorizationServer"`
	Client    Registration   `json:"client"`
	Scopes    []string       `json:"scopes,omitempty"` // requested (step-up adds to them)
	Token     Token          `json:"token"`
	SignedIn  time.Time      `json:"signedIn"`
}

// Token is an access token and what came with it.
type Token struct {
	AccessToken  string    `json:"accessToken"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"` // zero: the server gave none
	Scope        string    `json:"scope,omitempty"` // granted, as the server said
}

// String never shows a token.
func (t Token) String() string { return "oauth.Token{redacted}" }

// GoString never shows a token.
func (t Token) GoString() string { return t.String() }

// Store keeps records in a directory, one file per server.
type Store struct {
	Dir string
}

// ErrNoRecord: the server has no sign-in stored.
var ErrNoRecord = errors.New("not signed in")

func (s *Store) path(server string) string { return filepath.Join(s.Dir, server+".json") }

// Load returns the server's record, or ErrNoRecord.
func (s *Store) Load(server string) (*Record, error) {
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

// modTime is the record file's modification time, zero when there is none.
func (s *Store) modTime(server string) time.Time {
	fi, err := os.Stat(s.path(server))
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// Save writes r atomically (a 0600 temporary file renamed over the old
// one) in a 0700 directory.
func (s *Store) Save(r *Record) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("creating the sign-in directory: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(s.Dir, "."+r.Server+".*.tmp")
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
	if err := os.Rename(f.Name(), s.path(r.Server)); err != nil {
		return fmt.Errorf("saving the sign-in of %q: %w", r.Server, err)
	}
	return nil
}

// Delete removes the server's record; none is no error.
func (s *Store) Delete(server string) error {
	err := os.Remove(s.path(server))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
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
