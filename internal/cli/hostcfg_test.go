package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"mcpx/internal/config"
	"mcpx/internal/hostconfig"
)

// fixture returns the contents of one of hostconfig's fixtures.
func fixture(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "hostconfig", "testdata", "read", rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// userFile returns where host h's user-wide config lives under vars.
func userFile(t *testing.T, vars map[string]string, h *hostconfig.Host) string {
	t.Helper()
	files, err := h.Files(hostconfig.Env{Getenv: func(k string) string { return vars[k] }, GOOS: runtime.GOOS})
	if err != nil {
		t.Fatal(err)
	}
	return files[0]
}

func writeTestFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestImport(t *testing.T) {
	vars := xdgVars(t)
	h := hostconfig.Lookup("claude-code")
	writeTestFile(t, userFile(t, vars, h), fixture(t, "claude-code/.claude.json"))
	cfgFile := filepath.Join(vars["XDG_CONFIG_HOME"], "mcpx", "config.json")

	out, errOut, code := run(t, vars, "import", "claude-code", "--dry-run")
	if code != 0 {
		t.Fatalf("import --dry-run: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(cfgFile); err == nil {
		t.Fatal("--dry-run wrote the config")
	}
	dry, err := config.Parse([]byte(out), "", &config.LoadOptions{Lookup: anyVar})
	if err != nil {
		t.Fatalf("--dry-run printed a config that does not load: %v\n%s", err, out)
	}
	if got := strings.Join(dry.Names(), " "); got != "airtable linear sentry sentry-2" {
		t.Errorf("--dry-run servers %q, want airtable linear sentry sentry-2", got)
	}
	for _, want := range []string{
		"took      sentry (user)",
		"renamed   sentry (local /home/user/work/app) as sentry-2",
		"skipped   internal (user): it gets its headers from a headersHelper command, which mcpx does not run",
		"alwaysLoad: skipped: not a field Claude Code documents",
		"SENTRY_TOKEN (for sentry)",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the report lacks %q:\n%s", want, errOut)
		}
	}

	// A config with the user's own fields: they stay, in their order.
	own := "{\n  \"$schema\": \"x\",\n  \"mcpx\": {\"idleTimeout\": \"1m\"},\n  \"mcpServers\": {\n    \"sentry\": {\"command\": \"mine\"}\n  }\n}\n"
	writeTestFile(t, cfgFile, []byte(own))
	out, errOut, code = run(t, vars, "import", "claude-code")
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `not taken sentry (user): mcpx already has a server named "sentry" (--force replaces it)`) {
		t.Errorf("a same-named server was not reported:\n%s", out)
	}
	after, _ := os.ReadFile(cfgFile)
	// The servers taken follow the user's own, in the host's order.
	if !strings.HasPrefix(string(after), "{\n  \"$schema\": \"x\",\n  \"mcpx\": {\"idleTimeout\": \"1m\"},\n  \"mcpServers\": {\n    \"sentry\": {\"command\": \"mine\"},\n") {
		t.Errorf("the user's config was not kept as it was before the new servers:\n%s", after)
	}
	var order []string
	for _, name := range []string{`"sentry"`, `"airtable"`, `"linear"`, `"sentry-2"`} {
		order = append(order, fmt.Sprint(strings.Index(string(after), "    "+name+": ")))
	}
	if got := strings.Join(order, " "); !sortedInts(order) {
		t.Errorf("servers at offsets %s: want sentry (the user's), then airtable, linear, sentry-2 as the host lists them:\n%s", got, after)
	}
	cfg, err := config.Parse(after, cfgFile, &config.LoadOptions{Lookup: anyVar})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Servers["sentry"].Command != "mine" || cfg.Servers["airtable"] == nil {
		t.Errorf("after import: sentry %+v, airtable %v", cfg.Servers["sentry"], cfg.Servers["airtable"])
	}
	out, _, code = run(t, vars, "import", "claude-code", "--force")
	cfg, err = config.Load(cfgFile, &config.LoadOptions{Lookup: anyVar})
	if code != 0 || err != nil || cfg.Servers["sentry"].URL != "https://mcp.sentry.dev/mcp" || !strings.Contains(out, "replaced  sentry (user)") {
		t.Errorf("import --force: exit %d, %v, sentry %+v:\n%s", code, err, cfg.Servers["sentry"], out)
	}
}

func TestImportUsage(t *testing.T) {
	vars := xdgVars(t)
	for _, args := range [][]string{{"import"}, {"import", "a", "b", "c"}, {"import", "notahost"}, {"install"}, {"install", "claude-desktop", "--http"}, {"uninstall"}, {"doctor", "x"}} {
		_, errOut, code := run(t, vars, args...)
		if code != ExitUsage || !strings.HasSuffix(errOut, " (see mcpx "+args[0]+" --help)\n") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, want 2 with one line pointing at the help:\n%s", args, code, errOut)
		}
	}
	if _, errOut, code := run(t, vars, "import", "cursor"); code != ExitToolError || !strings.Contains(errOut, "reading Cursor's config") {
		t.Errorf("import of a missing file: exit %d %s, want 1", code, errOut)
	}
	for _, hostile := range []string{"/dev/zero", t.TempDir()} {
		if _, errOut, code := run(t, vars, "import", "cursor", hostile); code != ExitToolError || !strings.Contains(errOut, "is not a regular file") {
			t.Errorf("import of %s: exit %d %q, want 1: not a regular file", hostile, code, errOut)
		}
		if _, errOut, code := run(t, vars, "install", "cursor", "--file", hostile); code == 0 || !strings.Contains(errOut, "is not a regular file") {
			t.Errorf("install into %s: exit %d %q, want an error: not a regular file", hostile, code, errOut)
		}
	}
	if _, errOut, code := run(t, vars, "uninstall", "cursor"); code != ExitToolError || !strings.Contains(errOut, "nothing to undo") {
		t.Errorf("uninstall without install: exit %d %s, want 1", code, errOut)
	}
}

// hostFixtures are a fixture of each host's format, for its user file.
var hostFixtures = map[string]string{
	"claude-desktop": "claude-desktop/claude_desktop_config.json",
	"claude-code":    "claude-code/.claude.json",
	"cursor":         "cursor/.cursor/mcp.json",
	"vscode":         "vscode/proj/.vscode/mcp.json",
	"opencode":       "opencode/opencode.jsonc",
	"codex":          "codex/config.toml",
	"gemini":         "gemini/.gemini/settings.json",
	"windsurf":       "windsurf/mcp_config.json",
}

// TestInstallUninstallEachHost: install edits each host's file to run
// this mcpx and nothing else in it; uninstall puts it back byte for byte,
// or removes the file install created.
func TestInstallUninstallEachHost(t *testing.T) {
	for _, h := range hostconfig.Hosts {
		t.Run(h.Name, func(t *testing.T) {
			vars := xdgVars(t)
			file := userFile(t, vars, h)
			orig := fixture(t, hostFixtures[h.Name])
			writeTestFile(t, file, orig)
			out, errOut, code := run(t, vars, "install", h.Name)
			if code != 0 {
				t.Fatalf("install: exit %d %s", code, errOut)
			}
			if !strings.Contains(out, "--- a"+file) || !strings.Contains(out, "+++ b"+file) {
				t.Errorf("install printed no diff:\n%s", out)
			}
			installed, _ := os.ReadFile(file)
			servers, err := h.Servers(installed)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(servers["mcpx"], []byte(`"/nonexistent/mcpx"`)) || !bytes.Contains(servers["mcpx"], []byte(vars["XDG_RUNTIME_DIR"])) {
				t.Errorf("the mcpx entry does not run this mcpx with this shell's XDG dirs: %s", servers["mcpx"])
			}
			im, err := hostconfig.Read(h, file, orig, hostconfig.ReadOptions{Home: vars["HOME"]})
			if err != nil {
				t.Fatal(err)
			}
			if len(servers) != countOwn(im)+1 {
				t.Errorf("after install %d servers, want the %d of before and mcpx", len(servers), countOwn(im))
			}
			if _, _, code := run(t, vars, "install", h.Name); code != 0 {
				t.Errorf("a second install: exit %d", code)
			}
			out, errOut, code = run(t, vars, "uninstall", h.Name)
			if code != 0 || !strings.Contains(out, "put back "+file) {
				t.Fatalf("uninstall: exit %d %s %s", code, out, errOut)
			}
			if got, _ := os.ReadFile(file); !bytes.Equal(got, orig) {
				t.Errorf("uninstall did not put the file back byte for byte:\n%s", hostconfig.Diff("orig", "now", orig, got))
			}

			// No file before: install creates one, uninstall removes it.
			os.Remove(file)
			if _, errOut, code := run(t, vars, "install", h.Name); code != 0 {
				t.Fatalf("install into no file: exit %d %s", code, errOut)
			}
			if _, _, code := run(t, vars, "uninstall", h.Name); code != 0 || exists(file) {
				t.Errorf("uninstall of a created file: exit %d, file still there: %v", code, exists(file))
			}
		})
	}
}

// countOwn counts the servers of a file's own list (not Claude Code's
// per-project ones).
func countOwn(im *hostconfig.Import) int {
	n := 0
	for _, e := range im.Entries {
		if !strings.HasPrefix(e.Scope, "local ") {
			n++
		}
	}
	return n
}

// TestUninstallAfterEdit: a file changed since install loses only the
// mcpx entry; what was written since stays, and the backup is named.
func TestUninstallAfterEdit(t *testing.T) {
	vars := xdgVars(t)
	h := hostconfig.Lookup("cursor")
	file := userFile(t, vars, h)
	writeTestFile(t, file, fixture(t, hostFixtures["cursor"]))
	if _, errOut, code := run(t, vars, "install", h.Name); code != 0 {
		t.Fatalf("install: %d %s", code, errOut)
	}
	data, _ := os.ReadFile(file)
	edited, err := h.Edit(data, []hostconfig.Member{{Name: "added-later", Value: []byte(`{"command":"later"}`)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, file, edited)
	out, errOut, code := run(t, vars, "uninstall", h.Name)
	if code != 0 || !strings.Contains(out, "changed since mcpx install: removed only the mcpx server") {
		t.Fatalf("uninstall: exit %d %s %s", code, out, errOut)
	}
	now, _ := os.ReadFile(file)
	servers, _ := h.Servers(now)
	if _, ok := servers["mcpx"]; ok {
		t.Error("the mcpx entry is still there")
	}
	if _, ok := servers["added-later"]; !ok {
		t.Error("uninstall lost a server added after install")
	}
}

// TestInstallMoveHTTP: --move takes the servers mcpx can run into its
// config and out of the host's file (the rest stay); --http names the
// HTTP face with a token of the host's own.
func TestInstallMoveHTTP(t *testing.T) {
	vars := xdgVars(t)
	cfgFile := filepath.Join(vars["XDG_CONFIG_HOME"], "mcpx", "config.json")
	writeTestFile(t, cfgFile, []byte(`{"mcpx": {"http": {"listen": "127.0.0.1:7777"}}, "mcpServers": {}}`))
	h := hostconfig.Lookup("windsurf")
	file := userFile(t, vars, h)
	orig := fixture(t, hostFixtures["windsurf"])
	writeTestFile(t, file, orig)
	out, errOut, code := run(t, vars, "install", "windsurf", "--http", "--move")
	if code != 0 {
		t.Fatalf("install: exit %d %s", code, errOut)
	}
	if !strings.Contains(errOut, "is open to other users (mode -rw-r--r--) and now holds Windsurf's token for mcpx") {
		t.Errorf("no warning that a file others may read now holds the token: %q", errOut)
	}
	if !strings.Contains(out, `"Authorization": "Bearer <hidden>"`) {
		t.Errorf("the diff does not show the token's header hidden:\n%s", out)
	}
	tok, err := os.ReadFile(filepath.Join(vars["XDG_STATE_HOME"], "mcpx", "tokens", "windsurf"))
	if err != nil {
		t.Fatalf("no token was minted for windsurf: %v", err)
	}
	if strings.Contains(out, strings.TrimSpace(string(tok))) {
		t.Errorf("install printed the host's token:\n%s", out)
	}
	data, _ := os.ReadFile(file)
	servers, _ := h.Servers(data)
	want := `{"serverUrl":"http://127.0.0.1:7777/mcp","headers":{"Authorization":"Bearer ` + strings.TrimSpace(string(tok)) + `"}}`
	if compact(t, servers["mcpx"]) != want {
		t.Errorf("mcpx entry %s, want %s", servers["mcpx"], want)
	}
	if _, ok := servers["copied-from-cursor"]; !ok || len(servers) != 2 {
		t.Errorf("after --move the host has %v, want mcpx and the server mcpx skipped", servers)
	}
	cfg, err := config.Load(cfgFile, &config.LoadOptions{Lookup: anyVar})
	if err != nil || cfg.Servers["github"] == nil || cfg.Servers["figma"] == nil {
		t.Fatalf("mcpx's config after --move: %v %v\n%s", err, cfg, out)
	}
	if _, _, code := run(t, vars, "uninstall", "windsurf"); code != 0 {
		t.Fatal("uninstall failed")
	}
	if got, _ := os.ReadFile(file); !bytes.Equal(got, orig) {
		t.Errorf("uninstall after --move did not restore the file:\n%s", hostconfig.Diff("orig", "now", orig, got))
	}
}

func compact(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := jsonCompact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func jsonCompact(b *bytes.Buffer, raw []byte) error { return json.Compact(b, raw) }

// TestDoctorTokenInOpenFile: a host file that holds the host's token
// for mcpx's HTTP face and that others may read is a warning.
func TestDoctorTokenInOpenFile(t *testing.T) {
	vars := xdgVars(t)
	cfgFile := filepath.Join(vars["XDG_CONFIG_HOME"], "mcpx", "config.json")
	writeTestFile(t, cfgFile, []byte(`{"mcpx": {"http": {"listen": "127.0.0.1:7777"}}}`))
	os.Chmod(cfgFile, 0o600)
	file := userFile(t, vars, hostconfig.Lookup("gemini"))
	writeTestFile(t, file, []byte("{}\n"))
	if _, errOut, code := run(t, vars, "install", "gemini", "--http"); code != 0 {
		t.Fatalf("install: %s", errOut)
	}
	out, _, code := run(t, vars, "doctor")
	if code != ExitToolError || !strings.Contains(out, "warn  host    gemini: "+file+`: "mcpx" reaches mcpx's HTTP face at http://127.0.0.1:7777/mcp; the file holds its token and is open to others (mode -rw-r--r--)`) {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	os.Chmod(file, 0o600)
	out, _, code = run(t, vars, "doctor")
	if code != 0 || !strings.Contains(out, "ok    host    gemini: ") {
		t.Errorf("doctor after chmod 600: exit %d\n%s", code, out)
	}
}

// TestDoctorStaleEntry: a host entry that runs an mcpx binary that is no
// longer there fails; one that runs another mcpx is named.
func TestDoctorStaleEntry(t *testing.T) {
	vars := xdgVars(t)
	writeTestFile(t, userFile(t, vars, hostconfig.Lookup("claude-code")), []byte(`{"mcpServers": {"mcpx": {"command": "/gone/bin/mcpx", "args": ["serve"]}}}`))
	other := filepath.Join(t.TempDir(), "mcpx")
	writeTestFile(t, other, []byte("#!/bin/sh\n"))
	writeTestFile(t, userFile(t, vars, hostconfig.Lookup("cursor")), []byte(`{"mcpServers": {"gw": {"command": "`+other+`", "args": ["serve"]}}}`))
	out, _, code := run(t, vars, "doctor")
	if code != ExitToolError || !strings.Contains(out, `fail  host    claude-code: `) || !strings.Contains(out, `"mcpx" runs /gone/bin/mcpx, which is not there (mcpx install claude-code again)`) {
		t.Errorf("a stale entry: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, `ok    host    cursor: `) || !strings.Contains(out, `"gw" runs `+other+`, another mcpx than this one (/nonexistent/mcpx)`) {
		t.Errorf("another mcpx: exit %d\n%s", code, out)
	}
}

// TestInstallOverSymlink: a host's file kept as a symbolic link (to the
// user's dotfiles) stays a link through install and uninstall: install
// edits the file it leads to, uninstall puts that file back; a link to
// no file yet gets one from install, which uninstall removes, leaving
// the link.
func TestInstallOverSymlink(t *testing.T) {
	vars := xdgVars(t)
	h := hostconfig.Lookup("cursor")
	file := userFile(t, vars, h)
	dotfile := filepath.Join(vars["HOME"], "dotfiles", "cursor-mcp.json")
	orig := fixture(t, hostFixtures["cursor"])
	writeTestFile(t, dotfile, orig)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Dir(file), dotfile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rel, file); err != nil {
		t.Fatal(err)
	}
	isLink := func(what string) {
		t.Helper()
		if got, err := os.Readlink(file); err != nil || got != rel {
			t.Fatalf("after %s %s is no longer the link to %s: %q, %v", what, file, rel, got, err)
		}
	}
	if _, errOut, code := run(t, vars, "install", h.Name); code != 0 {
		t.Fatalf("install: exit %d %s", code, errOut)
	}
	isLink("install")
	edited, _ := os.ReadFile(dotfile)
	if servers, _ := h.Servers(edited); servers["mcpx"] == nil {
		t.Errorf("install did not edit the link's file:\n%s", edited)
	}
	if out, errOut, code := run(t, vars, "uninstall", h.Name); code != 0 {
		t.Fatalf("uninstall: exit %d %s %s", code, out, errOut)
	}
	isLink("uninstall")
	if got, _ := os.ReadFile(dotfile); !bytes.Equal(got, orig) {
		t.Errorf("uninstall did not put the link's file back:\n%s", hostconfig.Diff("orig", "now", orig, got))
	}

	os.Remove(dotfile)
	if _, errOut, code := run(t, vars, "install", h.Name); code != 0 {
		t.Fatalf("install through a link to no file: exit %d %s", code, errOut)
	}
	isLink("install through a link to no file")
	if !exists(dotfile) {
		t.Fatalf("install did not create %s", dotfile)
	}
	if _, errOut, code := run(t, vars, "uninstall", h.Name); code != 0 {
		t.Fatalf("uninstall: exit %d %s", code, errOut)
	}
	isLink("uninstall of a created file")
	if exists(dotfile) {
		t.Errorf("uninstall left the file install created")
	}
}

// sortedInts reports whether the decimal numbers in s ascend, none negative.
func sortedInts(s []string) bool {
	prev := -1
	for _, v := range s {
		n, err := strconv.Atoi(v)
		if err != nil || n <= prev {
			return false
		}
		prev = n
	}
	return true
}

// TestInstallCodexWaitsForMcpx: Codex's entry is required and waits the
// daemon's start plus the config's longest startupTimeout (a disabled
// server's aside), so Codex does not start a turn without mcpx's tools.
func TestInstallCodexWaitsForMcpx(t *testing.T) {
	vars := xdgVars(t)
	cfg := filepath.Join(vars["HOME"], "mcpx.json")
	writeTestFile(t, cfg, []byte(`{"mcpx": {"startupTimeout": "20s"}, "mcpServers": {
		"slow": {"command": "x", "startupTimeout": "2m"},
		"off": {"command": "x", "startupTimeout": "1h", "disabled": true},
		"quick": {"command": "x"}}}`))
	for _, args := range [][]string{{"install", "codex", "--config", cfg}, {"install", "codex", "--config", cfg, "--url", "http://127.0.0.1:7777/mcp"}} {
		if _, errOut, code := run(t, vars, args...); code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
		data, _ := os.ReadFile(userFile(t, vars, hostconfig.Lookup("codex")))
		servers, err := hostconfig.Lookup("codex").Servers(data)
		if err != nil {
			t.Fatal(err)
		}
		var entry struct {
			Required bool `json:"required"`
			Startup  int  `json:"startup_timeout_sec"`
		}
		if err := json.Unmarshal(servers["mcpx"], &entry); err != nil {
			t.Fatal(err)
		}
		if !entry.Required || entry.Startup != 135 {
			t.Errorf("%v: the entry is %s, want required and startup_timeout_sec 135 (15 s of daemon start and the slow server's 2m)", args, servers["mcpx"])
		}
	}
}
