package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRuntimeOutOfMemoryIsMemory: a child whose Go runtime dies of out of
// memory under its RLIMIT_DATA, before the watcher sees the heap pass the
// limit, reports the memory limit, not a failed process. The child runs
// under a hard RLIMIT_DATA of 96 MiB (it cannot raise it) while the pool's
// limit is 1 GiB, so the watcher never fires and the runtime's own fatal
// error is the only way the bomb can end.
func TestRuntimeOutOfMemoryIsMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory counts against RLIMIT_DATA")
	}
	wrapper := filepath.Join(t.TempDir(), "child")
	script := fmt.Sprintf("#!/bin/sh\nulimit -d %d || exit 99\nexec %q \"$@\"\n", 96<<10, testExecutable(t))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p := NewPool(PoolOptions{Executable: wrapper, Memory: 1 << 30})
	for _, code := range []string{
		`const a = []; while (true) a.push(new Array(100000).fill(1.5));`,
		`let s = "x"; const keep = []; while (true) { s = s + s; keep.push(s + "y"); }`,
	} {
		_, _, err := run(t, p, code, Limits{})
		var le *LimitError
		if !errors.As(err, &le) || le.Limit != LimitMemory || !strings.Contains(err.Error(), "memory limit (1024 MiB)") {
			t.Errorf("%s: error %v, want the memory limit", code, err)
		}
	}
}

func TestOutOfMemoryHeads(t *testing.T) {
	for head, want := range map[string]bool{
		"fatal error: runtime: out of memory\n\ngoroutine 1 [running]:\n":                                  true,
		"runtime: out of memory: cannot allocate 8192-byte block (1 in use)\nfatal error: out of memory\n": true,
		"fatal error: runtime: cannot allocate memory\n":                                                   true,
		"runtime/cgo: pthread_create failed: Resource temporarily unavailable\nSIGABRT: abort\n":           true,
		"panic: out of memory\n\ngoroutine 1 [running]:\n":                                                 false,
		"fatal error: concurrent map writes\n\ngoroutine 7 [running]:\n\tout of memory\n":                  false,
		"": false,
	} {
		if got := outOfMemory(head); got != want {
			t.Errorf("outOfMemory(%q) = %v, want %v", head, got, want)
		}
	}
}
