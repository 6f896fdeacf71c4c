package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A redirect page is the user's alone, leads to its link (escaped), and
// pages older than pageLife go when the next is written.
func TestWritePage(t *testing.T) {
	vars := xdgVars(t)
	env := &Env{LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
	link := `http://127.0.0.1:9/ui/#t=a"b<c`
	old, err := writePage(env, link)
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-2 * pageLife)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	page, err := writePage(env, link)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a page older than %s is still there: %v", pageLife, err)
	}
	fi, err := os.Stat(page)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the page: %v %v, want mode 0600", fi, err)
	}
	if di, err := os.Stat(filepath.Dir(page)); err != nil || di.Mode().Perm() != 0o700 || !strings.HasPrefix(page, vars["XDG_RUNTIME_DIR"]) {
		t.Errorf("the page's directory: %v %v, want the runtime directory's, mode 0700", di, err)
	}
	b, _ := os.ReadFile(page)
	if !strings.Contains(string(b), `content="0;url=http://127.0.0.1:9/ui/#t=a&#34;b&lt;c"`) {
		t.Errorf("the page does not lead to the link, escaped:\n%s", b)
	}
}
