package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mcpx/internal/daemon"
)

var update = flag.Bool("update", false, "rewrite testdata/help/*.txt from the current help text")

// fakeEnv is an Env that reads its environment from vars and writes to
// buffers. It cannot start a daemon: Executable does not exist. It reaches
// the job store as cmd/mcpx's does, through the daemon's functions.
func fakeEnv(vars map[string]string) (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Env{
		Stdin:  strings.NewReader(""),
		Stdout: &out,
		Stderr: &errb,
		LookupEnv: func(k string) (string, bool) {
			v, ok := vars[k]
			return v, ok
		},
		Version:    "test",
		Build:      "test-build",
		Executable: "/nonexistent/mcpx",
		ProbeStore: daemon.ProbeStore,
		WriteAudit: daemon.WriteAudit,
	}, &out, &errb
}

// xdgVars returns XDG directories under a fresh temp dir, so that no test
// reads the user's config or reaches a daemon of the user's.
func xdgVars(t *testing.T) map[string]string {
	dir := t.TempDir()
	return map[string]string{
		"XDG_CONFIG_HOME": filepath.Join(dir, "c"),
		"XDG_STATE_HOME":  filepath.Join(dir, "s"),
		"XDG_RUNTIME_DIR": filepath.Join(dir, "r"),
		"HOME":            filepath.Join(dir, "h"),
	}
}

// run runs the CLI in-process with a bounded context.
func run(t *testing.T, vars map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	env, out, errb := fakeEnv(vars)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code = Run(ctx, args, env)
	return out.String(), errb.String(), code
}

// golden compares got with testdata/help/name.txt, or rewrites the file
// with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "help", name+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/cli -run Help -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs from the golden file (-want +got); run with -update if the change is intended:\n%s", path, diff)
	}
}

// TestHelpGolden checks "mcpx help", "mcpx help VERB" and "mcpx VERB -h"
// for every verb against testdata/help. -h and "help VERB" print the same
// text, except for demo, whose -h prints the demo server's own flags.
func TestHelpGolden(t *testing.T) {
	vars := xdgVars(t)
	t.Run("help", func(t *testing.T) {
		for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
			out, errb, code := run(t, vars, args...)
			if code != ExitOK || errb != "" {
				t.Errorf("mcpx %s: exit %d, stderr %q; want 0 and nothing", strings.Join(args, " "), code, errb)
			}
			golden(t, "mcpx", out)
		}
	})
	var listed []string
	for _, c := range commands() {
		listed = append(listed, c.name)
		t.Run(c.name, func(t *testing.T) {
			out, errb, code := run(t, vars, "help", c.name)
			if code != ExitOK || errb != "" {
				t.Errorf("mcpx help %s: exit %d, stderr %q; want 0 and nothing", c.name, code, errb)
			}
			golden(t, c.name, out)
			if !strings.HasPrefix(out, "Usage: mcpx "+c.name) {
				t.Errorf("mcpx help %s does not start with its usage line:\n%s", c.name, out)
			}

			hout, herr, hcode := run(t, vars, c.name, "-h")
			if hcode != ExitOK || herr != "" {
				t.Errorf("mcpx %s -h: exit %d, stderr %q; want 0 and nothing", c.name, hcode, herr)
			}
			if c.name == "demo" {
				golden(t, "demo-flags", hout)
				return
			}
			if hout != out {
				t.Errorf("mcpx %s -h differs from mcpx help %s:\n%s", c.name, c.name, cmp.Diff(out, hout))
			}
		})
	}
	// Every verb is listed by "mcpx help".
	main, _, _ := run(t, vars, "help")
	for _, name := range listed {
		if !strings.Contains(main, "\t"+name+" ") {
			t.Errorf("mcpx help does not list %q:\n%s", name, main)
		}
	}
}

// TestUsageErrors checks that command-line mistakes exit 2 and print one
// line on stderr, the mistake and where the help is (the main help alone
// for no command at all), and nothing on stdout; testdata/help/usage-errors.txt
// holds what each prints.
func TestUsageErrors(t *testing.T) {
	vars := xdgVars(t)
	var all strings.Builder
	for _, tc := range []struct {
		name    string
		args    []string
		wantMsg string // stderr's one line, without the pointer to the help
	}{
		{"no command", nil, ""},
		{"unknown verb", []string{"frobnicate"}, `mcpx: unknown command "frobnicate"`},
		{"help for an unknown verb", []string{"help", "frobnicate"}, `mcpx: unknown command "frobnicate"`},
		{"unknown flag", []string{"call", "--bogus", "demo.echo"}, "mcpx call: flag provided but not defined: -bogus"},
		{"unknown flag after the tool", []string{"call", "demo.echo", "{}", "--bogus"}, "mcpx call: flag provided but not defined: -bogus"},
		{"flag without its value", []string{"call", "demo.echo", "--timeout"}, "mcpx call: flag needs an argument: -timeout"},
		{"bad duration", []string{"call", "--idle-timeout", "soon", "demo.echo"}, `mcpx call: invalid value "soon" for flag -idle-timeout: parse error`},
		{"missing tool", []string{"call"}, "mcpx call: want a tool and optionally its arguments"},
		{"too many arguments", []string{"call", "demo.echo", "{}", "{}"}, "mcpx call: want a tool and optionally its arguments"},
		{"negative timeout", []string{"call", "--timeout", "-1s", "demo.echo"}, "mcpx call: --timeout and --idle-timeout must not be negative"},
		{"negative idle timeout", []string{"call", "--idle-timeout", "-5s", "demo.echo"}, "mcpx call: --timeout and --idle-timeout must not be negative"},
		{"status takes no argument", []string{"status", "now"}, `mcpx status: unexpected argument "now"`},
		{"status watch and json", []string{"status", "--watch", "--json"}, "mcpx status: --watch and --json do not go together"},
		{"restart needs a server", []string{"restart"}, "mcpx restart: restart takes one server name"},
		{"restart takes one server", []string{"restart", "a", "b"}, "mcpx restart: restart takes one server name"},
		{"restart of an unknown server", []string{"restart", "nosuch"}, `mcpx restart: no server "nosuch" in the config (the servers are demo)`},
		{"ui takes no argument", []string{"ui", "now"}, `mcpx ui: unexpected argument "now"`},
		{"stop takes no argument", []string{"stop", "now"}, `mcpx stop: unexpected argument "now"`},
		{"stop with an empty config", []string{"stop", "--config", ""}, "mcpx stop: --config needs a file (leave it out for the default config)"},
		{"doctor with an empty config", []string{"doctor", "--config="}, "mcpx doctor: --config needs a file (leave it out for the default config)"},
		{"serve takes no argument", []string{"serve", "x"}, `mcpx serve: unexpected argument "x"`},
		{"daemon takes no argument", []string{"daemon", "x"}, `mcpx daemon: unexpected argument "x"`},
		{"daemon log level", []string{"daemon", "--log-level", "loud"}, `mcpx daemon: invalid log level "loud"`},
		{"daemon store not postgres", []string{"daemon", "--store", "mysql://u:hunter2@db/x"}, "mcpx daemon: invalid --store: want a PostgreSQL URL, postgres://user:password@host:port/database"},
		{"daemon store in background", []string{"daemon", "--store", "postgres://u:hunter2@db/x", "--background"}, "mcpx daemon: --store does not go with --background: name the store in the config (mcpx.store) instead"},
		{"serve log level", []string{"serve", "--log-level", "loud"}, `mcpx serve: invalid log level "loud"`},
		{"version takes no argument", []string{"version", "x"}, `mcpx version: unexpected argument "x"`},
		{"demo flag", []string{"demo", "--bogus"}, "mcpx demo: flag provided but not defined: -bogus"},
		{"token takes no argument", []string{"token", "cursor"}, `mcpx token: unexpected argument "cursor"`},
		{"token name and list", []string{"token", "--name", "cursor", "--list"}, "mcpx token: --name, --list and --revoke exclude each other"},
		{"token name and revoke", []string{"token", "--name", "a", "--revoke", "b"}, "mcpx token: --name, --list and --revoke exclude each other"},
		{"token revoke and path", []string{"token", "--revoke", "a", "--path"}, "mcpx token: --path does not go with --revoke"},
		{"token bad name", []string{"token", "--name", "../token"}, `mcpx token: token name "../token": use lower-case letters, digits, '-' and '_', starting with a letter or digit`},
		{"token bad revoke", []string{"token", "--revoke", "Cursor"}, `mcpx token: token name "Cursor": use lower-case letters, digits, '-' and '_', starting with a letter or digit`},
		{"token name without value", []string{"token", "--name"}, "mcpx token: flag needs an argument: -name"},
		{"login without a server", []string{"login"}, "mcpx login: want one SERVER"},
		{"login of an unknown server", []string{"login", "nosuch"}, `mcpx login: no server "nosuch" in the config`},
		{"login of a stdio server", []string{"login", "demo"}, `mcpx login: "demo" is a stdio server: it takes its credentials from its environment, not a sign-in`},
		{"logout of two servers", []string{"logout", "a", "b"}, "mcpx logout: want one SERVER"},
		{"audit takes no argument", []string{"audit", "alice"}, `mcpx audit: unexpected argument "alice"`},
		{"audit bad since", []string{"audit", "--since", "yesterday"}, `mcpx audit: --since: want an RFC 3339 time (2026-01-02T15:04:05Z) or a duration back from now (24h), not "yesterday"`},
		{"audit bad until", []string{"audit", "--until", "-5m"}, `mcpx audit: --until: want an RFC 3339 time (2026-01-02T15:04:05Z) or a duration back from now (24h), not "-5m"`},
		{"audit zero limit", []string{"audit", "--limit", "0"}, "mcpx audit: --limit must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errb, code := run(t, vars, tc.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, ExitUsage, errb)
			}
			if out != "" {
				t.Errorf("stdout = %q, want nothing", out)
			}
			want := mainHelp()
			switch {
			case tc.wantMsg == "":
			case len(tc.args) > 0 && lookup(tc.args[0]) != nil:
				want = tc.wantMsg + " (see mcpx " + tc.args[0] + " --help)\n"
			default:
				want = tc.wantMsg + " (see mcpx help)\n"
			}
			if diff := cmp.Diff(want, errb); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			if tc.wantMsg != "" {
				fmt.Fprintf(&all, "$ mcpx %s\n%s", strings.Join(tc.args, " "), errb)
			}
		})
	}
	golden(t, "usage-errors", all.String())
}

// TestConfigErrors checks that a broken config file exits 2 with one line
// naming the file and the field, before any daemon is involved.
func TestConfigErrors(t *testing.T) {
	vars := xdgVars(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file, want string
	}{
		{"bad setting", `{"mcpServers": {}, "mcpx": {"idleTimeout": "soon"}}`, `mcpx.idleTimeout: invalid duration "soon"`},
		{"servers not an object", `{"mcpServers": []}`, "mcpServers: must be an object"},
		{"unknown top-level key", `{"mcpServer": {}}`, "mcpServer: unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"call", "--config", path, "demo.echo"},
				{"tools", "--config", path},
				{"status", "--config", path},
				{"stop", "--config", path},
				{"call", "demo.echo", "{}", "--config", path}, // the flag after the arguments
			} {
				out, errb, code := run(t, vars, args...)
				if code != ExitUsage {
					t.Errorf("mcpx %s: exit %d, want %d", strings.Join(args, " "), code, ExitUsage)
				}
				if out != "" {
					t.Errorf("mcpx %s: stdout = %q, want nothing", strings.Join(args, " "), out)
				}
				prefix := "mcpx: config " + path + ": " + tc.want
				if !strings.HasPrefix(errb, prefix) || strings.Count(errb, "\n") != 1 || !strings.HasSuffix(errb, "\n") {
					t.Errorf("mcpx %s: stderr = %q, want one line starting %q", strings.Join(args, " "), errb, prefix)
				}
			}
		})
	}
	// The default config file is read when there is no --config.
	vars2 := xdgVars(t)
	def := filepath.Join(vars2["XDG_CONFIG_HOME"], "mcpx", "config.json")
	if err := os.MkdirAll(filepath.Dir(def), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(def, []byte(`{"mcpServers": {}, "mcpx": {"maxTimeout": -1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errb, code := run(t, vars2, "status")
	if want := "mcpx: config " + def + ": mcpx.maxTimeout: must not be negative\n"; code != ExitUsage || errb != want {
		t.Errorf("status with a broken default config: exit %d, stderr %q; want %d, %q", code, errb, ExitUsage, want)
	}
}

// TestConfigServerErrors checks that a mistake in one server's entry
// leaves that server unconfigured and the rest usable: status (with no
// daemon here) lists it as such, naming the field, and stop works.
func TestConfigServerErrors(t *testing.T) {
	vars := xdgVars(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, server, want string
	}{
		{"wrong type", `{"command": 5}`, "mcpServers.x.command: must be a string"},
		{"unknown field", `{"comand": "y"}`, `mcpServers.x.comand: unknown field (did you mean "command"?)`},
		{"no command", `{"args": []}`, "mcpServers.x: command or url is required"},
		{"unset variable", `{"command": "y", "env": {"TOKEN": "${MCPX_TEST_UNSET_VAR}"}}`, "mcpServers.x.env.TOKEN: ${MCPX_TEST_UNSET_VAR} is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			file := `{"mcpServers": {"ok": {"command": "y"}, "x": ` + tc.server + `}}`
			if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
				t.Fatal(err)
			}
			out, errb, code := run(t, vars, "status", "--config", path)
			if code != ExitTransport || errb != "" {
				t.Errorf("status: exit %d, stderr %q; want %d (no daemon) and nothing", code, errb, ExitTransport)
			}
			for _, want := range []string{"\nok      not running   stdio\nx       unconfigured  -\n", "\n  x: not configured: " + tc.want + "\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("status printed\n%s\nwant it to contain %q", out, want)
				}
			}
			if tc.name == "unset variable" {
				golden(t, "status-no-daemon", regexp.MustCompile(`\(socket [^)]*\)`).ReplaceAllString(out, "(socket SOCKET)"))
			}
			if _, errb, code := run(t, vars, "stop", "--config", path); code != ExitOK {
				t.Errorf("stop: exit %d, stderr %q; want 0", code, errb)
			}
		})
	}
}

// TestParseInterspersed checks that flags may follow positional arguments,
// that "--" ends the flags and that "-" stays positional.
func TestParseInterspersed(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantPos []string
		json    bool
		config  string
		timeout time.Duration
	}{
		{[]string{"demo.echo", "{}", "--json"}, []string{"demo.echo", "{}"}, true, "", 0},
		{[]string{"--json", "demo.echo", "{}"}, []string{"demo.echo", "{}"}, true, "", 0},
		{[]string{"demo.echo", "--config", "c.json", "{}", "-json"}, []string{"demo.echo", "{}"}, true, "c.json", 0},
		{[]string{"demo.echo", "--config=c.json", "-"}, []string{"demo.echo", "-"}, false, "c.json", 0},
		{[]string{"--config", "--json", "demo.echo"}, []string{"demo.echo"}, false, "--json", 0},
		{[]string{"demo.echo", "--timeout", "2s", "--", "--json", "-x"}, []string{"demo.echo", "--json", "-x"}, false, "", 2 * time.Second},
		{[]string{"--", "--json"}, []string{"--json"}, false, "", 0},
		{[]string{"--json=false", "a", "--json", "b"}, []string{"a", "b"}, true, "", 0},
		{nil, nil, false, "", 0},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		jsonFlag := fs.Bool("json", false, "")
		configFlag := fs.String("config", "", "")
		timeout := fs.Duration("timeout", 0, "")
		pos, err := parseInterspersed(fs, tc.args)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if diff := cmp.Diff(tc.wantPos, pos); diff != "" {
			t.Errorf("%q: positional (-want +got):\n%s", tc.args, diff)
		}
		if *jsonFlag != tc.json || *configFlag != tc.config || *timeout != tc.timeout {
			t.Errorf("%q: json=%v config=%q timeout=%v; want %v %q %v", tc.args, *jsonFlag, *configFlag, *timeout, tc.json, tc.config, tc.timeout)
		}
	}
}

// TestCallArgumentErrors: arguments that are not one JSON object exit 2
// with one line saying what is wrong and where (the parse error), not the
// whole usage.
func TestCallArgumentErrors(t *testing.T) {
	vars := xdgVars(t)
	for _, tc := range []struct {
		name string
		args []string
		want string // all of stderr
	}{
		{"cut short", []string{"call", "demo.export", `{"seconds":`}, "mcpx: arguments are not valid JSON: it ends early (11 bytes)\n"},
		{"not JSON", []string{"call", "demo.echo", "{n:1}"}, "mcpx: arguments are not valid JSON: invalid character 'n' looking for beginning of object key string (at byte 2 of 5)\n"},
		{"an array", []string{"call", "demo.echo", "[1]"}, "mcpx: arguments must be a JSON object, as '{\"name\": \"value\"}'\n"},
		{"a string", []string{"call", "demo.echo", `"x"`}, "mcpx: arguments must be a JSON object, as '{\"name\": \"value\"}'\n"},
		{"empty", []string{"call", "demo.echo", ""}, "mcpx: arguments are not valid JSON: it ends early (0 bytes)\n"},
		{"two objects", []string{"call", "demo.echo", "{} {}"}, "mcpx: arguments are not valid JSON: more after the object at byte 3\n"},
		{"-- ends the flags", []string{"call", "--", "demo.echo", "--json"}, "mcpx: arguments are not valid JSON: invalid character '-' in numeric literal (at byte 2 of 6)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errb, code := run(t, vars, tc.args...)
			if code != ExitUsage || out != "" {
				t.Errorf("exit %d, stdout %q; want %d and nothing", code, out, ExitUsage)
			}
			if diff := cmp.Diff(tc.want, errb); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}
