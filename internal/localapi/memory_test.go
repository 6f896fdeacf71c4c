package localapi

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// The status says what each of mcpx's processes costs, from /proc: this
// one (the daemon) and each warm sandbox child; a process that is gone
// is left out.
func TestStatusMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/PID/smaps_rollup is Linux's")
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	h := newTestHandlerOpts(t, &Options{Version: "test", Sandbox: func() []int {
		return []int{child.Process.Pid, gone.Process.Pid}
	}})
	st := h.Status()
	if len(st.Memory) != 2 {
		t.Fatalf("memory %+v, want this process and the live child", st.Memory)
	}
	for i, want := range []struct {
		role string
		pid  int
	}{{"daemon", os.Getpid()}, {"sandbox", child.Process.Pid}} {
		m := st.Memory[i]
		if m.Role != want.role || m.PID != want.pid || m.RSS <= 0 || m.PSS <= 0 || m.PSS > m.RSS {
			t.Errorf("memory[%d] = %+v, want %s pid %d with 0 < PSS <= RSS", i, m, want.role, want.pid)
		}
	}
	if self := st.Memory[0]; self.RSS < 1<<20 {
		t.Errorf("this process's RSS %d bytes: not read from /proc", self.RSS)
	}
}
