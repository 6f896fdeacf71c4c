package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestStopAfterConfigWritten: a daemon started with the built-in default
// (no config file yet) is stopped by `mcpx stop` once the default config
// file exists.
func TestStopAfterConfigWritten(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	if out, stderr, code := e.Run(60*time.Second, "tools"); code != 0 {
		t.Fatalf("mcpx tools (the built-in default): exit %d\n%s%s", code, out, stderr)
	}
	def := filepath.Join(e.Vars["XDG_CONFIG_HOME"], "mcpx", "config.json")
	if err := os.MkdirAll(filepath.Dir(def), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(def, []byte(`{"mcpServers":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := e.Run(30*time.Second, "stop")
	if code != 0 || !strings.Contains(out, "daemon stopped") {
		t.Fatalf("mcpx stop after the config file was written: exit %d: %s%s; want the daemon stopped", code, out, stderr)
	}
}

// TestServeFindsShellDaemon: a host that starts `mcpx serve` with only HOME
// and PATH (as Codex and the TypeScript SDK's stdio transport do) reaches
// the daemon the user's shell started with XDG_RUNTIME_DIR=/run/user/<uid>,
// and starts no second one. It needs that directory, as logind makes it.
func TestServeFindsShellDaemon(t *testing.T) {
	runDir := "/run/user/" + strconv.Itoa(os.Getuid())
	if fi, err := os.Stat(runDir); err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		t.Skipf("%s is not this user's runtime directory here", runDir)
	}
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	home := e.Vars["HOME"]
	filtered := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GORACE=" + mcpxtest.RaceQuickExit}
	shell := append(filtered, "XDG_RUNTIME_DIR="+runDir)
	run := func(env []string, args ...string) (string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, e.Bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	if out, code := run(shell, "tools", "--config", cfg); code != 0 {
		t.Fatalf("the shell's mcpx tools: exit %d\n%s", code, out)
	}
	t.Cleanup(func() { run(shell, "stop", "--config", cfg) })
	status := func() apitype.Status {
		out, code := run(shell, "status", "--config", cfg, "--json")
		var st apitype.Status
		if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
			t.Fatalf("the shell's mcpx status: exit %d: %s", code, out)
		}
		return st
	}
	daemon := status()

	serve := exec.Command(e.Bin, "serve", "--config", cfg)
	serve.Env = filtered
	serve.WaitDelay = 5 * time.Second
	stdin, _ := serve.StdinPipe()
	stdout, _ := serve.StdoutPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		serve.Process.Signal(syscall.SIGTERM)
		serve.Wait()
	}()
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"filtered","version":"1"}}}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	deadline := time.After(harness.WaitLong)
	for listed := false; !listed; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("mcpx serve ended before listing tools")
			}
			listed = strings.Contains(l, `"id":2`) && strings.Contains(l, "demo__echo")
		case <-deadline:
			t.Fatal("no tools/list answer from mcpx serve under a filtered environment")
		}
	}
	if st := status(); st.PID != daemon.PID || st.Hosts != 1 {
		t.Errorf("the shell's daemon (pid %d, then %d) has %d hosts, want the filtered serve as its one host", daemon.PID, st.PID, st.Hosts)
	}
	second, _ := filepath.Glob(filepath.Join(home, ".local", "state", "mcpx", "d-*.sock"))
	if len(second) > 0 {
		t.Errorf("a second daemon's socket: %v", second)
	}
}
