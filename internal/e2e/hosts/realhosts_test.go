package hosts

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// The real hosts, installed from npm (test/hosts), after `mcpx install`:
// each lists mcpx among its servers, connected (Codex's list does not
// connect: it must show the entry enabled), on stdio and over HTTP with a
// token of its own; then `mcpx uninstall` puts each file back byte for
// byte. All offline, with HOME and the XDG dirs in a temp dir.

type realHost struct {
	name, bin string
	list      []string // the arguments that list its MCP servers
	file      func(home string) string
	seed      string // the file's contents before install
	// connected matches the list's line for a connected mcpx.
	connected *regexp.Regexp
	// setup prepares the home dir (Gemini CLI's trusted folders).
	setup func(t *testing.T, home string)
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

func realHosts() []realHost {
	return []realHost{
		{
			name: "opencode", bin: "opencode", list: []string{"mcp", "list"},
			file:      func(home string) string { return filepath.Join(home, ".config", "opencode", "opencode.json") },
			seed:      "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  // updates need the network\n  \"autoupdate\": false\n}\n",
			connected: regexp.MustCompile(`mcpx\s+connected`),
		},
		{
			name: "claude-code", bin: "claude", list: []string{"mcp", "list"},
			file:      func(home string) string { return filepath.Join(home, ".claude.json") },
			seed:      "{\n  \"numStartups\": 3,\n  \"autoUpdates\": false\n}\n",
			connected: regexp.MustCompile(`mcpx: .* - ✔ Connected`),
		},
		{
			name: "gemini", bin: "gemini", list: []string{"mcp", "list"},
			file:      func(home string) string { return filepath.Join(home, ".gemini", "settings.json") },
			seed:      "{\n  \"general\": {\n    \"enableAutoUpdate\": false\n  }\n}\n",
			connected: regexp.MustCompile(`mcpx: .* - Connected`),
			setup: func(t *testing.T, home string) {
				// Gemini CLI starts no server of an untrusted folder's.
				trusted := fmt.Sprintf("{%q: \"TRUST_FOLDER\"}\n", home)
				if err := os.WriteFile(filepath.Join(home, ".gemini", "trustedFolders.json"), []byte(trusted), 0o600); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "codex", bin: "codex", list: []string{"mcp", "list"},
			file:      func(home string) string { return filepath.Join(home, ".codex", "config.toml") },
			seed:      "# the model is a stub's; nothing here reaches it\nmodel = \"gpt-5\"\n",
			connected: regexp.MustCompile(`(?m)^mcpx\s+\S+.*\benabled\b`),
		},
	}
}

func TestRealHostsInstall(t *testing.T) {
	t.Parallel()
	for _, rh := range realHosts() {
		t.Run(rh.name, func(t *testing.T) {
			t.Parallel()
			bin := mcpxtest.RealHost(t, rh.bin)
			e := mcpxtest.NewEnv(t)
			home := e.Vars["HOME"]
			// XDG_CONFIG_HOME stays mcpx's own (under the env dir); the
			// hosts that read it (opencode) are pointed at HOME/.config.
			file := rh.file(home)
			if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(rh.seed), 0o644); err != nil {
				t.Fatal(err)
			}
			if rh.setup != nil {
				rh.setup(t, home)
			}
			port := realFreePort(t)
			cfg := e.WriteConfig(map[string]any{"http": map[string]any{"listen": "127.0.0.1:" + port}}, mcpxtest.Demo{Name: "demo"})
			realStartDaemon(t, e, cfg, e.Path("daemon.log"))

			// "revoked": the HTTP entry with its token revoked must not
			// connect, which shows the list's "connected" came through
			// mcpx's HTTP face and the host's own token (Codex's list
			// connects to nothing, so it has no such control).
			ways := []string{"stdio", "http", "revoked"}
			if rh.name == "codex" {
				ways = ways[:2]
			}
			for _, way := range ways {
				args := []string{"install", rh.name, "--config", cfg, "--file", file}
				if way != "stdio" {
					args = append(args, "--http")
				}
				out, stderr, code := e.Run(30*time.Second, args...)
				if code != 0 {
					t.Fatalf("%s: mcpx %v: exit %d\n%s%s", way, args, code, out, stderr)
				}
				if way == "revoked" {
					if _, stderr, code := e.Run(30*time.Second, "token", "--revoke", rh.name); code != 0 {
						t.Fatalf("revoking the host's token: %s", stderr)
					}
				}
				installed := realReadFile(t, file)
				listed := runRealHost(t, e, bin, home, rh.list...)
				if got := rh.connected.MatchString(listed); got != (way != "revoked") {
					t.Errorf("%s: %s %v shows mcpx connected: %v, want %v:\n%s\nits file:\n%s", way, rh.bin, rh.list, got, way != "revoked", listed, realReadFile(t, file))
				}
				changed := !strings.Contains(realReadFile(t, file), `"mcpx"`) && !strings.Contains(realReadFile(t, file), "[mcp_servers.mcpx]")
				if changed {
					t.Errorf("%s: the mcpx entry is gone from %s after the host ran", way, file)
				}
				// A host that rewrites its own file after install (Claude
				// Code records its runs there) keeps what it wrote unless
				// --force asks for the backup.
				un := []string{"uninstall", rh.name}
				if realReadFile(t, file) != installed {
					t.Logf("%s: %s rewrote %s after install; uninstall --force puts the backup back", way, rh.bin, file)
					un = append(un, "--force")
				}
				out, stderr, code = e.Run(30*time.Second, un...)
				if code != 0 {
					t.Fatalf("%s: mcpx %v: exit %d\n%s%s", way, un, code, out, stderr)
				}
				if got := realReadFile(t, file); got != rh.seed {
					t.Errorf("%s: mcpx %v did not restore %s byte for byte:\n%s\n%s", way, un, file, out, got)
				}
			}
		})
	}
}

// runHost runs a real host's command offline in home, and returns its
// output without colours.
func runRealHost(t *testing.T, e *mcpxtest.Env, bin, home string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = home
	cmd.Env = append(e.Environ(),
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), // the host's, not mcpx's: the entry carries mcpx's
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"NO_COLOR=1", "CI=1", "DISABLE_AUTOUPDATER=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
	)
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not finish within 2 minutes:\n%s", bin, args, out.String())
	}
	if err != nil {
		t.Logf("%s %v: %v", bin, args, err)
	}
	return ansi.ReplaceAllString(out.String(), "")
}

func realReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// freePort returns a TCP port on loopback that was free a moment ago.
func realFreePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// startDaemon starts the daemon of cfg and waits until it answers; the
// env's cleanup stops it.
func realStartDaemon(t *testing.T, e *mcpxtest.Env, cfg, logFile string) {
	t.Helper()
	cmd := e.Command(context.Background(), "daemon", "--config", cfg, "--log", logFile)
	var logs harness.SyncBuffer // the daemon writes while a failure reads it
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		e.Run(20*time.Second, "stop", "--config", cfg)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, _, code := e.Run(10*time.Second, "status", "--config", cfg); code == 0 {
			return
		}
		select {
		case <-done:
			t.Fatalf("the daemon exited:\n%s", logs.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not answer within 30s:\n%s", logs.String())
		}
	}
}
