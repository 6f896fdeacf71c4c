package oauth

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"mcpx/internal/config"
	"mcpx/internal/seal"
)

// KeyBytes is the length of a sign-in key: AES-256.
const KeyBytes = seal.KeySize

// keyHint says how to make a key, in errors about one.
const keyHint = "a key is 32 random bytes, base64-encoded: head -c 32 /dev/urandom | base64"

// Keys seal and open sign-ins kept in a shared store (AES-256-GCM). The
// current key seals; the previous ones only open, during a rotation.
type Keys struct {
	current  key
	previous []key
}

type key struct {
	id [8]byte // the first bytes of the key's SHA-256: which key sealed a blob
	*seal.Key
}

// ErrNoKey: the config keeps sign-ins in a shared store but names no key.
var ErrNoKey = errors.New("mcpx.store keeps the sign-ins in PostgreSQL, sealed with a key that is not in the database: " +
	"name it with mcpx.oauth.keyFile or mcpx.oauth.keyEnv (" + keyHint + ")")

// LoadKeys reads the keys k names: from its file or environment variable
// (getenv), and its previous files. Each must hold exactly one key.
func LoadKeys(k config.SignInKey, getenv func(string) string) (*Keys, error) {
	if !k.Named() {
		return nil, ErrNoKey
	}
	var raw, where string
	if k.File != "" {
		where = "mcpx.oauth.keyFile " + k.File
		b, err := os.ReadFile(k.File)
		if err != nil {
			return nil, fmt.Errorf("reading the sign-in key (%s): %w", where, err)
		}
		raw = string(b)
	} else {
		where = "mcpx.oauth.keyEnv $" + k.Env
		raw = getenv(k.Env)
		if raw == "" {
			return nil, fmt.Errorf("the sign-in key (%s) is not set in the environment", where)
		}
	}
	cur, err := parseKey(raw, where)
	if err != nil {
		return nil, err
	}
	ks := &Keys{current: cur}
	for _, f := range k.PreviousFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading a previous sign-in key (mcpx.oauth.previousKeyFiles): %w", err)
		}
		prev, err := parseKey(string(b), "mcpx.oauth.previousKeyFiles "+f)
		if err != nil {
			return nil, err
		}
		ks.previous = append(ks.previous, prev)
	}
	return ks, nil
}

// NewKeys makes Keys of raw 32-byte keys, the first the current one.
func NewKeys(current []byte, previous ...[]byte) (*Keys, error) {
	cur, err := newKey(current)
	if err != nil {
		return nil, err
	}
	ks := &Keys{current: cur}
	for _, p := range previous {
		k, err := newKey(p)
		if err != nil {
			return nil, err
		}
		ks.previous = append(ks.previous, k)
	}
	return ks, nil
}

func parseKey(raw, where string) (key, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(raw))
	if err != nil || len(b) != KeyBytes {
		// Never the value: it may be a key of the wrong form.
		return key{}, fmt.Errorf("the sign-in key (%s) is not a key: %s", where, keyHint)
	}
	return newKey(b)
}

func newKey(b []byte) (key, error) {
	if len(b) != KeyBytes {
		return key{}, fmt.Errorf("a sign-in key is %d bytes, not %d", KeyBytes, len(b))
	}
	k, err := seal.NewKey(b)
	if err != nil {
		return key{}, err
	}
	return key{id: k.ID(), Key: k}, nil
}

// ID names the current key (not secret: a prefix of its hash), as
// status and errors show it.
func (ks *Keys) ID() string { return hex.EncodeToString(ks.current.id[:]) }

// sealVersion is the first byte of a sealed blob: its layout.
const sealVersion = 1

// seal encrypts plain for server: version, key id, nonce, ciphertext. The
// server's name is authenticated with it, so a blob moved to another
// name does not open.
func (ks *Keys) seal(server string, plain []byte) []byte {
	k := ks.current
	out := make([]byte, 0, 1+len(k.id)+seal.NonceSize+len(plain)+16) // 16: the GCM tag
	out = append(out, sealVersion)
	out = append(out, k.id[:]...)
	return k.Seal(out, plain, ad(server))
}

// KeyError is a sealed sign-in that the configured keys cannot open.
type KeyError struct {
	Server string
	Sealed string // the id of the key that sealed it, if it says
	Have   string // the current key's id
	Reason string
}

func (e *KeyError) Error() string {
	msg := fmt.Sprintf("the stored sign-in of %q does not open with the configured key (%s)", e.Server, e.Reason)
	if e.Sealed != "" && e.Sealed != e.Have {
		msg += fmt.Sprintf(": it was sealed with key %s, mcpx.oauth names key %s; "+
			"during a rotation list the old key in mcpx.oauth.previousKeyFiles, or run mcpx login %s again", e.Sealed, e.Have, e.Server)
	}
	return msg
}

// open decrypts a blob seal made for server. stale reports that a
// previous key opened it (it is to be sealed anew with the current one).
func (ks *Keys) open(server string, blob []byte) (plain []byte, stale bool, err error) {
	kerr := &KeyError{Server: server, Have: ks.ID()}
	if len(blob) < 1+8 || blob[0] != sealVersion {
		kerr.Reason = "not a sealed sign-in of this mcpx"
		return nil, false, kerr
	}
	id := blob[1:9]
	kerr.Sealed = hex.EncodeToString(id)
	for i, k := range append([]key{ks.current}, ks.previous...) {
		if string(k.id[:]) != string(id) {
			continue
		}
		rest := blob[9:]
		if len(rest) < seal.NonceSize {
			break
		}
		plain, err := k.Open(rest, ad(server))
		if err != nil {
			kerr.Reason = "it fails authentication: altered, or moved from another server's name"
			return nil, false, kerr
		}
		return plain, i > 0, nil
	}
	kerr.Reason = "no configured key has its id"
	return nil, false, kerr
}

func ad(server string) []byte { return []byte("mcpx sign-in\x00" + server) }
