package oauth

import (
	"encoding/base64"
	"os"
	"strings"
	"testing"
)

// TestOpensSignInSealedBefore: a sign-in sealed by an earlier mcpx (the
// golden, under the key 0x00..0x1f, for server "github") still opens, so
// the sign-ins kept in a shared store survive an upgrade.
func TestOpensSignInSealedBefore(t *testing.T) {
	raw, err := os.ReadFile("testdata/signin-sealed-v1.b64")
	if err != nil {
		t.Fatal(err)
	}
	blob, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, KeyBytes)
	for i := range key {
		key[i] = byte(i)
	}
	ks, err := NewKeys(key)
	if err != nil {
		t.Fatal(err)
	}
	plain, stale, err := ks.open("github", blob)
	if err != nil || stale || string(plain) != `{"access_token":"sealed-before"}` {
		t.Fatalf("open = %q, stale %v, %v; want the sign-in sealed before", plain, stale, err)
	}
	again, _, err := ks.open("github", ks.seal("github", plain))
	if err != nil || string(again) != string(plain) {
		t.Fatalf("a blob sealed now opens as %q, %v", again, err)
	}
	if len(ks.seal("github", plain)) != len(blob) {
		t.Errorf("a blob sealed now is %d bytes, the golden %d: the layout changed", len(ks.seal("github", plain)), len(blob))
	}
}
