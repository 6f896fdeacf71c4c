package seal_test

import (
	"bytes"
	"errors"
	"testing"

	"mcpx/internal/seal"
)

func key(t *testing.T, first byte) *seal.Key {
	t.Helper()
	raw := make([]byte, seal.KeySize)
	for i := range raw {
		raw[i] = first + byte(i)
	}
	k, err := seal.NewKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpen(t *testing.T) {
	k, other := key(t, 0), key(t, 1)
	ad := []byte("purpose")
	box := k.Seal([]byte("head"), []byte("plain"), ad)
	if !bytes.HasPrefix(box, []byte("head")) || len(box) != 4+seal.NonceSize+5+16 {
		t.Fatalf("Seal appended %d bytes after the head: want nonce, ciphertext and tag", len(box)-4)
	}
	plain, err := k.Open(box[4:], ad)
	if err != nil || string(plain) != "plain" {
		t.Fatalf("Open = %q, %v", plain, err)
	}
	if bytes.Equal(k.Seal(nil, []byte("plain"), ad), k.Seal(nil, []byte("plain"), ad)) {
		t.Error("two boxes of the same bytes are equal: the nonce is not fresh")
	}
	altered := bytes.Clone(box[4:])
	altered[len(altered)-1] ^= 1
	for name, open := range map[string]func() ([]byte, error){
		"altered":   func() ([]byte, error) { return k.Open(altered, ad) },
		"other ad":  func() ([]byte, error) { return k.Open(box[4:], []byte("other")) },
		"other key": func() ([]byte, error) { return other.Open(box[4:], ad) },
		"short":     func() ([]byte, error) { return k.Open(box[4:4+seal.NonceSize-1], ad) },
	} {
		if p, err := open(); !errors.Is(err, seal.ErrOpen) || p != nil {
			t.Errorf("%s: Open = %q, %v; want ErrOpen", name, p, err)
		}
	}
	if _, err := seal.NewKey(make([]byte, 16)); err == nil {
		t.Error("NewKey took a 16-byte key")
	}
	if k.ID() == other.ID() {
		t.Error("two keys have one id")
	}
}
