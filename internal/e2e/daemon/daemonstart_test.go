package daemon

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestDaemonStartError: a daemon that cannot start (its HTTP port is
// taken) has the command that started it print why at once, and tries
// once.
func TestDaemonStartError(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := e.WriteConfig(map[string]any{"http": map[string]any{"listen": taken.Addr().String()}}, mcpxtest.Demo{Name: "demo"})
	start := time.Now()
	out, errb, code := e.Run(harness.WaitLong, "call", "--config", cfg, "demo.echo", `{}`)
	took := time.Since(start)
	if code != 3 || out != "" || !strings.Contains(errb, "address already in use") || strings.Count(errb, "\n") != 1 {
		t.Errorf("call with the daemon's port taken: exit %d, stdout %q, stderr %q; want 3 and one line naming the cause", code, out, errb)
	}
	if took > 5*time.Second {
		t.Errorf("the call took %s to report the daemon's start error, want it at once", took)
	}
	logs, _ := filepath.Glob(filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "daemon-*.log"))
	if len(logs) != 1 {
		t.Fatalf("daemon logs %q, want one", logs)
	}
	log, _ := os.ReadFile(logs[0])
	if n := strings.Count(string(log), "address already in use"); n != 1 {
		t.Errorf("the daemon log names the error %d times, want once:\n%s", n, log)
	}
}

// TestDaemonBackgroundServes: `mcpx daemon --background` returns once the
// daemon serves, so a status right after finds it.
func TestDaemonBackgroundServes(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	for i := range 5 {
		if out, errb, code := e.Run(harness.WaitLong, "daemon", "--background", "--config", cfg); code != 0 {
			t.Fatalf("daemon --background: exit %d\n%s%s", code, out, errb)
		}
		if out, errb, code := e.Run(harness.WaitLong, "status", "--config", cfg); code != 0 {
			t.Fatalf("round %d: status right after daemon --background: exit %d\n%s%s", i, code, out, errb)
		}
		if out, errb, code := e.Run(harness.WaitLong, "stop", "--config", cfg); code != 0 {
			t.Fatalf("stop: exit %d\n%s%s", code, out, errb)
		}
	}
}
