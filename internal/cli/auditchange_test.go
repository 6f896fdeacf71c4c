package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpx/internal/audit"
	"mcpx/internal/store"
)

// writeAuditConfig writes a config whose mcpx.audit block is audit, and
// returns its path.
func writeAuditConfig(t *testing.T, audit string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {}, "mcpx": {"audit": `+audit+`}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// readAuditFile reads the records of a JSON-lines audit file.
func readAuditFile(t *testing.T, path string) []audit.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var recs []audit.Record
	for l := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		recs = append(recs, r)
	}
	return recs
}

func summary(recs []audit.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, strings.Join([]string{string(r.Kind), r.Action, r.Outcome, r.Detail}, " / "))
	}
	return out
}

// TestTokenChangesAreAudited: minting and revoking tokens, which the CLI
// does with no daemon, leave exactly their lines (a revoke of no token
// none) in the audit file and
// the store's table (this user's SQLite file), before the change; a
// token printed again leaves none.
func TestTokenChangesAreAudited(t *testing.T) {
	vars := xdgVars(t)
	vars["USER"] = "alice"
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := writeAuditConfig(t, `{"file": `+jsonString(file)+`}`)
	for _, args := range [][]string{
		{"token"}, {"token"}, {"token", "--name", "ci"}, {"token", "--name", "ci"}, {"token", "--list"}, {"token", "--revoke", "ci"},
	} {
		args = append(args, "--config", cfg)
		if _, errb, code := run(t, vars, args...); code != ExitOK || errb != "" {
			t.Fatalf("mcpx %s: exit %d, stderr %q", strings.Join(args, " "), code, errb)
		}
	}
	if _, _, code := run(t, vars, "token", "--revoke", "ci", "--config", cfg); code != ExitUsage {
		t.Fatalf("revoking twice: exit %d, want %d", code, ExitUsage)
	}
	want := []string{
		"token / mint / ok / the default token",
		"token / mint / ok / the token named ci",
		"token / revoke / ok / the token named ci",
	}
	recs := readAuditFile(t, file)
	if got := summary(recs); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the audit file holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, r := range recs {
		if r.Principal != "local" || r.Face != audit.FaceCLI || !strings.HasPrefix(r.Name, "alice@") || r.Time.IsZero() {
			t.Errorf("record %+v: want principal local, face cli, name alice@..., a time", r)
		}
	}
	st, err := store.OpenSQLite(filepath.Join(vars["XDG_STATE_HOME"], "mcpx", "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.QueryAudit(context.Background(), store.AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) {
		t.Fatalf("the store's table holds %d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, row := range rows { // newest first
		r := recs[len(recs)-1-i]
		if row.Kind != string(r.Kind) || row.Action != r.Action || row.Outcome != r.Outcome || row.Name != r.Name || row.Face != "cli" {
			t.Errorf("row %d %+v, want the file's %+v", i, row, r)
		}
	}
}

// TestAuditFailingClosedRefusesTheChange: with the audit file on a full
// device, a token is neither minted nor revoked, and the error says why;
// failing open, the change is made and the lost record said.
func TestAuditFailingClosedRefusesTheChange(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	vars := xdgVars(t)
	dir := filepath.Join(vars["XDG_STATE_HOME"], "mcpx", "tokens")
	if _, errb, code := run(t, vars, "token", "--name", "kept"); code != ExitOK {
		t.Fatalf("minting kept: exit %d, %s", code, errb)
	}
	closed := writeAuditConfig(t, `{"file": "/dev/full", "store": false}`)
	const why = `refused: the audit log cannot be written (writing the audit log to /dev/full: write /dev/full: no space left on device); mcpx.audit.onFailure is "closed", so nothing was changed`
	for _, args := range [][]string{{"token", "--name", "ci"}, {"token", "--revoke", "kept"}, {"token"}} {
		args = append(args, "--config", closed)
		out, errb, code := run(t, vars, args...)
		if code != ExitTransport || out != "" || !strings.Contains(errb, why) {
			t.Errorf("mcpx %s: exit %d, stdout %q, stderr %q; want exit 3 and %q", strings.Join(args, " "), code, out, errb, why)
		}
	}
	for name, want := range map[string]bool{"ci": false, "kept": true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("token %s: %v, want it there: %v", name, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(vars["XDG_STATE_HOME"], "mcpx", "token")); !os.IsNotExist(err) {
		t.Errorf("the default token was minted: %v", err)
	}
	open := writeAuditConfig(t, `{"file": "/dev/full", "store": false, "onFailure": "open"}`)
	out, errb, code := run(t, vars, "token", "--name", "ci", "--config", open)
	if code != ExitOK || len(strings.TrimSpace(out)) != 43 || !strings.Contains(errb, `audit record lost (mcpx.audit.onFailure is "open")`) {
		t.Errorf("failing open: exit %d, stdout %q, stderr %q", code, out, errb)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
