package daemon

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// runWithEnv runs an mcpx command with extra environment variables that
// the daemon it reaches does not have.
func runWithEnv(t *testing.T, e *mcpxtest.Env, extra []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), harness.WaitLong)
	defer cancel()
	cmd := e.Command(ctx, args...)
	cmd.Env = append(cmd.Env, extra...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running mcpx %v: %v", args, err)
	}
	return out.String(), errb.String(), 0
}

// TestUnconfiguredServer: a server whose entry names an unset variable is
// shown as not configured (status, tools, doctor, a call to it) while the
// other server and every command keep working; mcpx reload hands the
// daemon the variable from the reloading shell; a reload of a file that
// does not load shows in status until a good one.
func TestUnconfiguredServer(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	const secretVar = "MCPX_TEST_UNCONFIGURED_KEY"
	os.Unsetenv(secretVar) // neither the CLI nor the daemon it starts has it
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "good"},
		mcpxtest.Demo{Name: "remote", Fields: map[string]any{"env": map[string]string{"API_KEY": "${" + secretVar + "}"}}})
	why := "mcpServers.remote.env.API_KEY: ${" + secretVar + "} is not set"

	if out, errb, code := e.Run(harness.WaitLong, "call", "--config", cfg, "good.echo", `{"n":1}`); code != 0 {
		t.Fatalf("call on the good server: exit %d\n%s%s", code, out, errb)
	}
	out, errb, code := e.Run(harness.WaitLong, "status", "--config", cfg)
	if code != 0 || !strings.Contains(out, "remote: not configured: "+why) {
		t.Errorf("status: exit %d, want 0 and remote not configured:\n%s%s", code, out, errb)
	}
	if !hasRow(out, "remote", "unconfigured") || !hasRow(out, "good", "ready") {
		t.Errorf("status: want remote unconfigured and good ready:\n%s", out)
	}
	out, errb, code = e.Run(harness.WaitLong, "tools", "--config", cfg)
	if code != 0 || !strings.Contains(out, "good__echo") || !strings.Contains(errb, "server remote is unavailable: not configured: "+why) {
		t.Errorf("tools: exit %d, want good's tools and remote named on stderr:\n%s%s", code, out, errb)
	}
	_, errb, code = e.Run(harness.WaitLong, "call", "--config", cfg, "remote.echo", `{}`)
	if want := `mcpx: unknown tool "remote.echo": server "remote" is not configured: ` + why + "\n"; code != 2 || errb != want {
		t.Errorf("call on the unconfigured server: exit %d, stderr %q; want 2, %q", code, errb, want)
	}
	_, errb, code = e.Run(harness.WaitLong, "call", "--config", cfg, "nosuch.echo", `{}`)
	if want := `mcpx: unknown tool "nosuch.echo": no server "nosuch" (the servers are good; see mcpx tools)` + "\n"; code != 2 || errb != want {
		t.Errorf("call on a server that does not exist: exit %d, stderr %q; want 2, %q", code, errb, want)
	}
	out, _, code = e.Run(harness.WaitLong, "doctor", "--config", cfg, "--timeout", "30s")
	if code != 1 || !strings.Contains(out, "fail  server  remote: not configured: "+why) || !strings.Contains(out, "ok    server  good:") {
		t.Errorf("doctor: exit %d, want 1 with remote failing and good ok:\n%s", code, out)
	}

	// The reloading shell has the variable; the daemon still does not.
	out, errb, code = runWithEnv(t, e, []string{secretVar + "=s3cret"}, "reload", "--config", cfg)
	if code != 0 || !strings.Contains(out, "added     remote") || errb != "" {
		t.Fatalf("reload with the variable set: exit %d, want 0 adding remote:\n%s%s", code, out, errb)
	}
	out, errb, code = e.Run(harness.WaitLong, "call", "--config", cfg, "remote.echo", `{"n":2}`)
	if code != 0 {
		t.Fatalf("call on remote after the reload: exit %d\n%s%s", code, out, errb)
	}
	if out, _, _ := e.Run(harness.WaitLong, "status", "--config", cfg); strings.Contains(out, "unconfigured") {
		t.Errorf("status after the reload still shows a server unconfigured:\n%s", out)
	}

	// A file that does not load: the daemon keeps its config and says so.
	good, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(good), `"mcpServers"`, `"mcpx": {"idleTimeout": "soon"}, "mcpServers"`, 1)
	if err := os.WriteFile(cfg, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(harness.WaitLong); ; time.Sleep(50 * time.Millisecond) {
		out, errb, code = e.Run(harness.WaitLong, "status", "--config", cfg)
		if strings.Contains(out, "reload   failed ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed the failed reload:\n%s%s", out, errb)
		}
	}
	if code != 2 || !strings.Contains(out, `mcpx.idleTimeout: invalid duration "soon"`) || !strings.Contains(errb, `mcpx.idleTimeout: invalid duration "soon"`) || !hasRow(out, "remote", "ready") {
		t.Errorf("status with a broken file: exit %d, want 2, the daemon with the reload's error, remote still running:\n%s%s", code, out, errb)
	}
	if err := os.WriteFile(cfg, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errb, code := e.Run(harness.WaitLong, "reload", "--config", cfg); code != 0 {
		t.Fatalf("reload of the mended file: exit %d\n%s%s", code, out, errb)
	}
	if out, _, _ := e.Run(harness.WaitLong, "status", "--config", cfg); strings.Contains(out, "reload   failed") {
		t.Errorf("status after a good reload still shows the failed one:\n%s", out)
	}
}

// hasRow reports whether a table in out has a row starting with name whose
// next column is state.
func hasRow(out, name, state string) bool {
	for l := range strings.SplitSeq(out, "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == name && f[1] == state {
			return true
		}
	}
	return false
}
