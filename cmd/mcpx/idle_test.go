package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// idleFileBudget is the most of the executable an idle daemon keeps
// resident (RssFile) once it has been quiet for a while: its start-up and
// its first calls fault in 17 to 18 MB, which it gives back when quiet
// (5 to 6 MB stay), and it must stay under the budget through the
// daemon's periodic work of its first minute (the job store's renewals
// and expiry fault SQLite's code back in, some 7 MB, when they touch the
// store with no job running).
const idleFileBudget = 10 << 20

// idleHold is how long after its call the daemon must keep under the
// budget: past its first minute, when the jobs manager's first periodic
// expiry falls.
const idleHold = 70 * time.Second

// TestDaemonGivesBackPagesWhenQuiet runs a daemon with the demo upstream,
// makes a call through it, waits for the daemon's resident share of the
// executable to fall under its budget once nothing goes on, and checks
// that it stays there.
func TestDaemonGivesBackPagesWhenQuiet(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	env := os.Environ()
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "HOME"} {
		d := filepath.Join(dir, strings.ToLower(k))
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		env = append(env, k+"="+d)
	}
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"demo":{"command":`+strconv.Quote(bin)+`,"args":["demo"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	daemon := exec.Command(bin, "daemon", "--config", cfg)
	daemon.Env = env
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = daemon.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- daemon.Wait() }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = daemon.Process.Kill()
			<-done
		}
	}()
	call := exec.Command(bin, "call", "--quiet", "--config", cfg, "demo.echo", `{"x":1}`)
	call.Env = env
	if out, err := call.CombinedOutput(); err != nil {
		t.Fatalf("mcpx call: %v\n%s", err, out)
	}
	rssFile := func() int {
		status, err := os.ReadFile("/proc/" + strconv.Itoa(daemon.Process.Pid) + "/status")
		if err != nil {
			t.Fatal(err)
		}
		for l := range strings.SplitSeq(string(status), "\n") {
			if rest, ok := strings.CutPrefix(l, "RssFile:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
				return kb << 10
			}
		}
		t.Fatalf("no RssFile in the daemon's status:\n%s", status)
		return 0
	}
	called := time.Now()
	after := rssFile()
	least := after
	for deadline := called.Add(45 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		least = min(least, rssFile())
		if least <= idleFileBudget {
			break
		}
	}
	if least <= idleFileBudget {
		most := least
		for time.Since(called) < idleHold {
			time.Sleep(500 * time.Millisecond)
			most = max(most, rssFile())
		}
		t.Logf("the daemon's RssFile: %.1f MB after the call, %.1f MB once quiet, at most %.1f MB until %v after the call",
			float64(after)/(1<<20), float64(least)/(1<<20), float64(most)/(1<<20), idleHold)
		if most > idleFileBudget {
			t.Errorf("the quiet daemon took back %.1f MB of the executable (budget %.1f MB): its periodic work touches what it gave back",
				float64(most)/(1<<20), float64(idleFileBudget)/(1<<20))
		}
		return
	}
	t.Errorf("the daemon keeps %.1f MB of the executable resident 45 s after its call (%.1f MB just after); budget %.1f MB",
		float64(least)/(1<<20), float64(after)/(1<<20), float64(idleFileBudget)/(1<<20))
}
