package hosttoken

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mcpx/internal/config"
)

func TestCheckTokenName(t *testing.T) {
	for _, name := range []string{"cursor", "a", "claude-code", "host_2", "0day", strings.Repeat("x", 32)} {
		if err := CheckTokenName(name); err != nil {
			t.Errorf("CheckTokenName(%q) = %v, want nil", name, err)
		}
	}
	for _, name := range []string{"", "Cursor", "-x", "_x", ".token", "a.b", "a/b", "..", "a:b", "a b", "é", strings.Repeat("x", 33)} {
		if err := CheckTokenName(name); err == nil {
			t.Errorf("CheckTokenName(%q) = nil, want an error", name)
		}
	}
}

// TestNamedTokens mints, lists and revokes named tokens in a fresh dir.
func TestNamedTokens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "mcpx", "tokens")
	if infos, err := ListTokens(dir); err != nil || len(infos) != 0 {
		t.Fatalf("ListTokens of a missing dir: %v, %v; want none", infos, err)
	}
	cursor, err := NamedToken(dir, "cursor")
	if err != nil || len(cursor) != 43 {
		t.Fatalf("NamedToken: %q, %v", cursor, err)
	}
	if again, err := NamedToken(dir, "cursor"); err != nil || again != cursor {
		t.Errorf("NamedToken again: %q, %v; want the same token", again, err)
	}
	zed, _ := NamedToken(dir, "zed")
	if zed == cursor {
		t.Error("two names share a token")
	}
	if di, err := os.Stat(dir); err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("token dir: %v, %v; want mode 0700", di.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "cursor")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v, %v; want mode 0600", fi.Mode(), err)
	}
	if _, err := NamedToken(dir, "../token"); err == nil {
		t.Error("NamedToken accepted a path as a name")
	}
	// A file that is no token name (a minting's temporary file) is not listed.
	os.WriteFile(filepath.Join(dir, ".token-123"), []byte("x"), 0o600)
	infos, err := ListTokens(dir)
	var names []string
	for _, in := range infos {
		names = append(names, in.Name)
		if in.Err != nil || time.Since(in.Created) > time.Minute {
			t.Errorf("%s: created %v, err %v", in.Name, in.Created, in.Err)
		}
	}
	if err != nil || !cmp.Equal(names, []string{"cursor", "zed"}) {
		t.Errorf("ListTokens: %v, %v; want cursor and zed", names, err)
	}

	if err := RevokeToken(dir, "cursor"); err != nil {
		t.Fatalf("RevokeToken: %v", err)
	}
	if err := RevokeToken(dir, "cursor"); !errors.Is(err, ErrNoToken) {
		t.Errorf("revoking twice: %v, want ErrNoToken", err)
	}
	if err := RevokeToken(dir, "../token"); err == nil || errors.Is(err, ErrNoToken) {
		t.Errorf("revoking a path: %v, want a name error", err)
	}
	if infos, _ := ListTokens(dir); len(infos) != 1 || infos[0].Name != "zed" {
		t.Errorf("after revoking cursor: %v", infos)
	}
	// Re-minting a revoked name makes a new token.
	if again, _ := NamedToken(dir, "cursor"); again == cursor {
		t.Error("a revoked name came back with its old token")
	}

	// A token others may read is listed as refused; a dir others may
	// read refuses everything.
	os.Chmod(filepath.Join(dir, "zed"), 0o644)
	infos, _ = ListTokens(dir)
	if len(infos) != 2 || infos[1].Name != "zed" || infos[1].Err == nil || !strings.Contains(infos[1].Err.Error(), "readable by others") {
		t.Errorf("a world-readable token: %+v, want it refused", infos)
	}
	os.Chmod(dir, 0o755)
	if _, err := ListTokens(dir); err == nil || !strings.Contains(err.Error(), "open to others") {
		t.Errorf("ListTokens of a world-readable dir: %v, want refused", err)
	}
	if _, err := NamedToken(dir, "cursor"); err == nil {
		t.Error("NamedToken used a world-readable dir")
	}
}

// TestHostTokensMatch: the default token matches as "", a named one as its
// name, anything else not; a token minted or revoked in the dir counts at
// the next Match, with no reload.
func TestHostTokensMatch(t *testing.T) {
	root := t.TempDir()
	def, err := config.Token(filepath.Join(root, "token"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "tokens")
	var errs []error
	ht := NewHostTokens(def, dir, func(err error) { errs = append(errs, err) })
	check := func(what, tok, wantName string, wantOK bool) {
		t.Helper()
		if name, ok := ht.Match(tok); name != wantName || ok != wantOK {
			t.Errorf("%s: Match = %q, %v; want %q, %v", what, name, ok, wantName, wantOK)
		}
	}
	check("the default token, no dir", def, "", true)
	check("empty", "", "", false)
	check("another", strings.Repeat("A", 43), "", false)

	cursor, _ := NamedToken(dir, "cursor")
	check("a token minted after the first Match", cursor, "cursor", true)
	zed, _ := NamedToken(dir, "zed")
	check("zed", zed, "zed", true)
	check("cursor beside zed", cursor, "cursor", true)
	check("the default beside named ones", def, "", true)
	check("a prefix of cursor", cursor[:20], "", false)

	if err := RevokeToken(dir, "cursor"); err != nil {
		t.Fatal(err)
	}
	check("a revoked token", cursor, "", false)
	check("zed after cursor's revocation", zed, "zed", true)

	// Past the racy window, the dir is not read again while it is
	// unchanged; a revocation changes it, and is seen.
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(dir, hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	old := ht.current()
	if got := ht.current(); &got[0] != &old[0] {
		t.Error("an unchanged dir was read again")
	}
	if err := RevokeToken(dir, "zed"); err != nil {
		t.Fatal(err)
	}
	check("zed, revoked while cached", zed, "", false)

	// A token others may read opens nothing, and is reported once.
	bad, _ := NamedToken(dir, "bad")
	os.Chmod(filepath.Join(dir, "bad"), 0o640)
	os.WriteFile(filepath.Join(dir, ".touch"), nil, 0o600) // a change of the dir
	check("a token readable by others", bad, "", false)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `refusing token "bad"`) {
		t.Errorf("errors reported: %v, want one for bad", errs)
	}
}

// TestHostTokensRacy: a change of the token dir within its modification
// time's granularity (here: the time set back after the change, as a
// coarse file system clock would leave it) is still seen while the last
// read is within racyWindow of that time.
func TestHostTokensRacy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tokens")
	ht := NewHostTokens("", dir, nil)
	NamedToken(dir, "first")
	tick := time.Now()
	if err := os.Chtimes(dir, tick, tick); err != nil {
		t.Fatal(err)
	}
	if len(ht.current()) != 1 {
		t.Fatal("first not read")
	}
	late, _ := NamedToken(dir, "late")
	if err := os.Chtimes(dir, tick, tick); err != nil {
		t.Fatal(err)
	}
	if name, ok := ht.Match(late); !ok || name != "late" {
		t.Errorf("a token minted within the dir's last tick: Match = %q, %v; want late", name, ok)
	}
}

// TestHostTokensConcurrent: Match is safe for concurrent use while tokens
// are minted and revoked (run with -race).
func TestHostTokensConcurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tokens")
	ht := NewHostTokens("", dir, nil)
	keep, _ := NamedToken(dir, "keep")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				if name, ok := ht.Match(keep); !ok || name != "keep" {
					t.Errorf("Match(keep) = %q, %v", name, ok)
					return
				}
			}
		})
	}
	for range 20 {
		NamedToken(dir, "churn")
		RevokeToken(dir, "churn")
	}
	wg.Wait()
	if _, ok := ht.Match(""); ok {
		t.Error("no token matched with no default")
	}
}
