package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTokenVerb mints, lists and revokes named tokens through the command
// line, and checks that the default token is untouched by them.
func TestTokenVerb(t *testing.T) {
	vars := xdgVars(t)
	mustRun := func(args ...string) string {
		t.Helper()
		out, errb, code := run(t, vars, args...)
		if code != ExitOK || errb != "" {
			t.Fatalf("mcpx %s: exit %d, stderr %q", strings.Join(args, " "), code, errb)
		}
		return strings.TrimSpace(out)
	}
	def := mustRun("token")
	if out := mustRun("token", "--list"); out != "" {
		t.Errorf("--list with no named token: %q, want nothing", out)
	}
	cursor := mustRun("token", "--name", "cursor")
	if len(cursor) != 43 || cursor == def {
		t.Fatalf("--name cursor printed %q (default %q)", cursor, def)
	}
	if again := mustRun("token", "--name=cursor"); again != cursor {
		t.Errorf("--name cursor again: %q, want %q", again, cursor)
	}
	dir := filepath.Join(vars["XDG_STATE_HOME"], "mcpx", "tokens")
	if p := mustRun("token", "--name", "cursor", "--path"); p != filepath.Join(dir, "cursor") {
		t.Errorf("--name cursor --path = %q", p)
	}
	if p := mustRun("token", "--list", "--path"); p != dir {
		t.Errorf("--list --path = %q, want %q", p, dir)
	}
	mustRun("token", "--name", "zed")
	list := mustRun("token", "--list")
	if !regexp.MustCompile(`^cursor  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\nzed     \d{4}-`).MatchString(list) {
		t.Errorf("--list:\n%s", list)
	}
	if strings.Contains(list, cursor) {
		t.Error("--list shows a token")
	}
	if out := mustRun("token", "--revoke", "cursor"); out != "revoked token cursor" {
		t.Errorf("--revoke: %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "cursor")); !os.IsNotExist(err) {
		t.Errorf("the revoked token's file: %v, want gone", err)
	}
	out, errb, code := run(t, vars, "token", "--revoke", "cursor")
	if code != ExitUsage || out != "" || errb != "mcpx: no token is named \"cursor\" (mcpx token --list lists them)\n" {
		t.Errorf("revoking twice: exit %d, stdout %q, stderr %q", code, out, errb)
	}
	if list := mustRun("token", "--list"); !strings.HasPrefix(list, "zed ") || strings.Contains(list, "cursor") {
		t.Errorf("--list after revoking cursor:\n%s", list)
	}
	if mustRun("token") != def {
		t.Error("the default token changed")
	}
}
