package hosttoken

import (
	"cmp"
	"crypto/subtle"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"mcpx/internal/config"
)

// Named host tokens: each HTTP host may hold a token of its own, so that
// mcpx can tell one HTTP host from another (sealed request state is bound
// to it) and one host's access can be revoked without revoking all. Each
// is a file like the default token's, TokenDir/<name>; its name is the
// file's name.

// ErrNoToken is returned by [RevokeToken] for a name no token has.
var ErrNoToken = errors.New("no token by that name")

// maxTokenName is the longest token name.
const maxTokenName = 32

// CheckTokenName reports whether name may name a host token: 1 to 32
// lower-case letters, digits, '-' and '_', starting with a letter or a
// digit. Lower case only, so that no two names meet on a file system that
// ignores case; no '.', so that no name is hidden or a path; no ':', which
// separates "http" from the name in a principal.
func CheckTokenName(name string) error {
	if name == "" || len(name) > maxTokenName {
		return fmt.Errorf("token name %q: want 1 to %d characters", name, maxTokenName)
	}
	for i, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '-' || c == '_') && i > 0:
		default:
			return fmt.Errorf("token name %q: use lower-case letters, digits, '-' and '_', starting with a letter or digit", name)
		}
	}
	return nil
}

// NamedToken returns the token named name in dir, minting it first if
// there is none (as [config.Token] does for the default token).
func NamedToken(dir, name string) (string, error) {
	if err := CheckTokenName(name); err != nil {
		return "", err
	}
	if err := checkTokenDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return config.Token(filepath.Join(dir, name))
}

// checkTokenDir refuses a token dir that others may read or write: they
// could learn the names, or plant a token.
func checkTokenDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("token dir %s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("token dir %s is open to others (mode %v): run chmod 700 on it", dir, fi.Mode().Perm())
	}
	return nil
}

// RevokeToken deletes the token named name from dir: from the next
// request on, no HTTP face of this user accepts it. ErrNoToken if there
// is none.
func RevokeToken(dir, name string) error {
	if err := CheckTokenName(name); err != nil {
		return err
	}
	err := os.Remove(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("revoking token %q: %w", name, ErrNoToken)
	}
	if err != nil {
		return fmt.Errorf("revoking token %q: %w", name, err)
	}
	return nil
}

// TokenInfo describes one named token, never its value.
type TokenInfo struct {
	Name    string
	Created time.Time // the file's modification time
	// Err, if not nil, is why the token is refused (its file is readable
	// by others, or holds no token).
	Err error
}

// ListTokens returns the named tokens in dir, by name. A missing dir holds
// none. Files whose names are not token names are left out.
func ListTokens(dir string) ([]TokenInfo, error) {
	named, err := readTokenDir(dir)
	if err != nil {
		return nil, err
	}
	infos := make([]TokenInfo, 0, len(named))
	for _, n := range named {
		infos = append(infos, TokenInfo{Name: n.name, Created: n.mtime, Err: n.err})
	}
	return infos, nil
}

// namedToken is one file of the token dir.
type namedToken struct {
	name  string
	value string // "" if err
	mtime time.Time
	err   error
}

// readTokenDir reads every token of dir, sorted by name.
func readTokenDir(dir string) ([]namedToken, error) {
	err := checkTokenDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the token dir: %w", err)
	}
	var named []namedToken
	for _, e := range entries {
		if CheckTokenName(e.Name()) != nil {
			continue // a temporary file of a token being minted, or a stranger
		}
		n := namedToken{name: e.Name()}
		path := filepath.Join(dir, e.Name())
		n.value, n.err = config.ReadToken(path)
		if fi, err := os.Lstat(path); err == nil {
			n.mtime = fi.ModTime()
		}
		named = append(named, n)
	}
	slices.SortFunc(named, func(a, b namedToken) int { return cmp.Compare(a.name, b.name) })
	return named, nil
}

// racyWindow is how long after the token dir's last change its
// modification time cannot be trusted to tell a later change: a file
// system's clock may be that coarse. Within it, the dir is read again on
// each request.
const racyWindow = 2 * time.Second

// HostTokens are the bearer tokens that open the HTTP face: the default
// token and the named tokens in a dir, read again whenever the dir
// changes (a token minted or revoked by `mcpx token` in another process
// counts from the next request on, with no restart). Checking a token
// costs one stat of the dir, unless it changed. A HostTokens is safe for
// concurrent use.
type HostTokens struct {
	def string
	dir string

	onErr func(error)

	mu      sync.Mutex
	modTime time.Time // the dir's when named was read; zero if it did not exist
	readAt  time.Time // when named was read; zero before the first read
	named   []namedToken
	failing bool // the last read failed, and onErr was told
}

// NewHostTokens returns the tokens def (the default; "" for none) and
// those in dir ("" for none). onErr, if not nil, is told why the dir
// could not be read (the named tokens then open nothing until it can) and
// why a token in it is refused, once per change of the dir; it must not
// call t.
func NewHostTokens(def, dir string, onErr func(error)) *HostTokens {
	return &HostTokens{def: def, dir: dir, onErr: onErr}
}

// Match returns the name of the token tok: "" for the default token, the
// token's name for a named one; ok is false if tok opens nothing. Every
// candidate is compared in constant time.
func (t *HostTokens) Match(tok string) (name string, ok bool) {
	if tok == "" {
		return "", false
	}
	match := 0
	if t.def != "" {
		match = subtle.ConstantTimeCompare([]byte(tok), []byte(t.def))
	}
	for _, n := range t.current() {
		if n.err == nil && subtle.ConstantTimeCompare([]byte(tok), []byte(n.value)) == 1 && match == 0 {
			name, match = n.name, 1
		}
	}
	return name, match == 1
}

// current returns the named tokens, reading the dir again if it changed.
func (t *HostTokens) current() []namedToken {
	if t.dir == "" {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var mod time.Time
	fi, err := os.Stat(t.dir)
	switch {
	case err == nil:
		mod = fi.ModTime()
	case !errors.Is(err, fs.ErrNotExist):
		t.failLocked(fmt.Errorf("reading the token dir: %w", err))
		return nil
	}
	if !t.readAt.IsZero() && mod.Equal(t.modTime) && t.readAt.Sub(mod) > racyWindow {
		return t.named
	}
	now := time.Now()
	named, err := readTokenDir(t.dir)
	if err != nil {
		t.failLocked(err)
		return nil
	}
	t.named, t.modTime, t.readAt, t.failing = named, mod, now, false
	for _, n := range named {
		if n.err != nil && t.onErr != nil {
			t.onErr(fmt.Errorf("refusing token %q: %w", n.name, n.err))
		}
	}
	return t.named
}

// failLocked forgets the named tokens after a failed read, telling onErr
// once until a read succeeds. t.mu is held.
func (t *HostTokens) failLocked(err error) {
	t.named, t.readAt = nil, time.Time{}
	if !t.failing && t.onErr != nil {
		t.onErr(err)
	}
	t.failing = true
}

// DefaultOnly returns the default token of t alone, without its named
// tokens: a replica takes those from the shared store instead.
func (t *HostTokens) DefaultOnly() *HostTokens {
	return &HostTokens{def: t.def, onErr: t.onErr}
}
