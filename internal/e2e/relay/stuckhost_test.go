package relay

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestServeStopsWithStuckHost: a host that stops reading mcpx's output (its
// pipe full of progress) must not keep `mcpx serve --in-process` from
// stopping on SIGTERM.
func TestServeStopsWithStuckHost(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	cmd := exec.Command(e.Bin, "serve", "--in-process", "--config", cfg)
	cmd.Env = e.Environ()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe() // never read
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	send := func(line string) {
		if _, err := stdin.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stuck","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// 20 bursts of 5,000 progress notifications: far more than a pipe holds.
	for i := range 20 {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"demo__burst","arguments":{"count":5000},"_meta":{"progressToken":%d}}}`, 100+i, i))
	}
	waitPipeFull(t, stdout.(*os.File))
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		t.Logf("mcpx serve exited %s after SIGTERM", time.Since(start))
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("mcpx serve --in-process did not exit within 20s of SIGTERM while its host was not reading")
	}
}

// waitPipeFull waits until the pipe f reads from has no room left: a write
// end of it, opened here, polls as not writable (the byte count cannot
// tell, as the pipe's pages need not be full to the byte).
func waitPipeFull(t *testing.T, f *os.File) {
	t.Helper()
	rfd, err := pipeCtl(f, func(fd int) (int, error) { return fd, nil })
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", rfd), os.O_WRONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	harness.WaitUntil(t, harness.WaitLong, "full pipe", func() bool {
		n, err := pipeCtl(w, func(fd int) (int, error) {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			if _, err := unix.Poll(p, 0); err != nil {
				return 0, err
			}
			return int(p[0].Revents & unix.POLLOUT), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
}
