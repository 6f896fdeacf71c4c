package config

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TokenFile returns the path of the bearer token HTTP hosts present to
// mcpx on TCP: StateDir/token. One token serves every daemon of the user.
func (p Paths) TokenFile() string { return filepath.Join(p.StateDir, "token") }

// TokenDir returns the directory of named host tokens (package hosttoken):
// StateDir/tokens.
func (p Paths) TokenDir() string { return filepath.Join(p.StateDir, "tokens") }

// Token returns the token stored at path, creating it first if there is
// none: 32 random bytes, base64url, in a file of mode 0600 (its directory
// 0700). Two processes creating it at once end up with the same token. A
// token file that others may read is refused, not used.
func Token(path string) (string, error) {
	for range 2 {
		tok, err := ReadToken(path)
		if !errors.Is(err, fs.ErrNotExist) {
			return tok, err
		}
		if err := createToken(path); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return ReadToken(path)
}

// ReadToken reads the token file at path, refusing one that others may
// read or that holds no usable token.
func ReadToken(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("token file %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("token file %s is readable by others (mode %v): run chmod 600 on it, or delete it for a new token", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 16 {
		return "", fmt.Errorf("token file %s holds no usable token (delete it for a new one)", path)
	}
	return tok, nil
}

// createToken writes a new token to a temporary file and links it into
// place, which fails with fs.ErrExist if another process was first.
func createToken(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the token: %w", err)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("creating the token: %w", err)
	}
	f, err := os.CreateTemp(dir, ".token-*")
	if err != nil {
		return fmt.Errorf("creating the token: %w", err)
	}
	defer os.Remove(f.Name())
	_, err = f.WriteString(base64.RawURLEncoding.EncodeToString(b) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("creating the token: %w", err)
	}
	if err := os.Link(f.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fs.ErrExist
		}
		return fmt.Errorf("creating the token: %w", err)
	}
	return nil
}
