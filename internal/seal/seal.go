// Package seal seals and opens bytes with AES-256-GCM: a random nonce,
// then the ciphertext and its tag, authenticated with additional data the
// caller names (what the bytes are for, so that a box moved to another
// use does not open). It is mcpx's one sealer: the bridge's requestState
// and the sign-ins kept in a shared store are sealed here, each in its
// own framing around the box.
//
// A [Key] is safe for concurrent use. The package imports the standard
// library only.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// KeySize is the size of a key: AES-256.
const KeySize = 32

// NonceSize is the size of the nonce a box starts with.
const NonceSize = 12

// ErrOpen: a box that is too short, altered, sealed under another key or
// for other additional data.
var ErrOpen = errors.New("seal: the box does not open")

// Key seals and opens boxes under one key.
type Key struct {
	aead cipher.AEAD
	id   [8]byte
}

// NewKey makes a Key of KeySize raw bytes.
func NewKey(raw []byte) (*Key, error) {
	if len(raw) != KeySize {
		return nil, fmt.Errorf("a sealing key is %d bytes, not %d", KeySize, len(raw))
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	k := &Key{aead: aead}
	copy(k.id[:], sum[:])
	return k, nil
}

// RandomKey returns KeySize fresh random bytes.
func RandomKey() []byte {
	raw := make([]byte, KeySize)
	if _, err := rand.Read(raw); err != nil {
		panic(fmt.Sprintf("seal: making a key: %v", err)) // crypto/rand does not fail on Linux
	}
	return raw
}

// ID names the key without giving it away: the first 8 bytes of its
// SHA-256.
func (k *Key) ID() [8]byte { return k.id }

// Seal appends to dst the box of plain: a fresh nonce, then the
// ciphertext and tag, authenticated with ad.
func (k *Key) Seal(dst, plain, ad []byte) []byte {
	nonce := make([]byte, NonceSize)
	if _, err := rand.Read(nonce); err != nil {
		panic(fmt.Sprintf("seal: making a nonce: %v", err))
	}
	dst = append(dst, nonce...)
	return k.aead.Seal(dst, nonce, plain, ad)
}

// Open returns the plain bytes of a box Seal made with the same key and
// ad, or ErrOpen.
func (k *Key) Open(box, ad []byte) ([]byte, error) {
	if len(box) < NonceSize {
		return nil, ErrOpen
	}
	plain, err := k.aead.Open(nil, box[:NonceSize], box[NonceSize:], ad)
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}
