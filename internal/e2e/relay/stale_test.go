package relay

import (
	"os"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/sock"
)

// TestDaemonExitsWhenItsBuildIsGone: a daemon whose executable was deleted
// (a rebuild, a `go run` that ended) serves nobody new, so it exits as soon
// as it is idle instead of lingering for the idle-exit time.
func TestDaemonExitsWhenItsBuildIsGone(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	bin := e.Path("mcpx-copy")
	data, err := os.ReadFile(e.Bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o700); err != nil {
		t.Fatal(err)
	}
	copyEnv := *e
	copyEnv.Bin = bin
	if out, errOut, code := copyEnv.Run(60*time.Second, "call", "--config", cfg, "demo.echo", `{"x":1}`); code != 0 {
		t.Fatalf("call exited %d: %s %s", code, out, errOut)
	}
	// The daemon's files are keyed by the copy's build; find its lock.
	paths, err := config.DefaultPaths(func(k string) string { v, _ := e.Lookup(k); return v })
	if err != nil {
		t.Fatal(err)
	}
	var lock string
	entries, _ := os.ReadDir(paths.RuntimeDir)
	for _, ent := range entries {
		if n := ent.Name(); len(n) > 5 && n[len(n)-5:] == ".lock" {
			lock = paths.RuntimeDir + "/" + n
		}
	}
	if lock == "" {
		t.Fatalf("no daemon lock in %s", paths.RuntimeDir)
	}
	if unlock, err := sock.Lock(lock); err == nil {
		unlock()
		t.Fatal("the daemon is not holding its lock after the call")
	}
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if unlock, err := sock.Lock(lock); err == nil {
			unlock()
			return // the daemon has exited
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon still runs 20s after its executable was deleted")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
