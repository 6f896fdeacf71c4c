package sandbox

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// TestBacktrackingRegexIsCPU: a regular expression that backtracks
// catastrophically runs in the engine's matcher, which no interrupt
// reaches; it still ends at the CPU limit, reported as the CPU limit (not
// the memory limit, though the kernel's SIGKILL is what ends it).
func TestBacktrackingRegexIsCPU(t *testing.T) {
	p := testPool(t, 0)
	start := time.Now()
	_, _, err := run(t, p, `return /^(a+)+(?=c)/.test("a".repeat(40))`, Limits{CPU: time.Second})
	t.Logf("answered after %v: %v", time.Since(start), err)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitCPU {
		t.Errorf("error %v, want the cpu limit", err)
	}
}

// TestDeathLimit: how a child the parent did not kill died names the limit
// that ended it; a SIGKILL is the CPU limit once the child has used it (the
// RLIMIT_CPU backstop), else the memory limit.
func TestDeathLimit(t *testing.T) {
	lim := Limits{CPU: 2 * time.Second}
	for _, tc := range []struct {
		sig  syscall.Signal
		cpu  time.Duration
		head string
		want string // "" for no limit
	}{
		{syscall.SIGKILL, 4 * time.Second, "", LimitCPU},
		{syscall.SIGKILL, 2 * time.Second, "", LimitCPU},
		{syscall.SIGKILL, 300 * time.Millisecond, "", LimitMemory},
		{syscall.SIGXCPU, 0, "", LimitCPU},
		{0, time.Second, "fatal error: runtime: out of memory\n", LimitMemory},
		{syscall.SIGSEGV, time.Second, "", ""},
		{0, 5 * time.Second, "panic: boom\n", ""},
	} {
		got := ""
		if le := deathLimit(tc.sig, tc.cpu, tc.head, 64<<20, lim); le != nil {
			got = le.Limit
		}
		if got != tc.want {
			t.Errorf("deathLimit(%v, %v, %q) = %q, want %q", tc.sig, tc.cpu, tc.head, got, tc.want)
		}
	}
}
