package harness

import (
	"bufio"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/mcpxtest"
)

// ServeHTTPChild is `mcpx serve --http`, spawned by a test.
type ServeHTTPChild struct {
	URL    string
	Cmd    *exec.Cmd
	Logs   *SyncBuffer   // its stderr
	Exited chan struct{} // closed once it has exited and its stderr has ended
	err    error         // its exit, once exited is closed
}

// StartServeHTTP spawns `mcpx serve --http 127.0.0.1:0` with cfg (and
// extra arguments) in e's environment, and returns it once it has printed
// its URL, within 30s. Each line of its stderr goes to its logs, and to
// line unless nil. The caller stops it; one still running when the test
// ends is killed.
func StartServeHTTP(t *testing.T, e *mcpxtest.Env, cfg string, line func(string), extra ...string) *ServeHTTPChild {
	t.Helper()
	args := append([]string{"serve", "--config", cfg, "--http", "127.0.0.1:0", "--log-level", "info"}, extra...)
	cmd := exec.Command(e.Bin, args...)
	cmd.Env = e.Environ()
	cmd.WaitDelay = 5 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &ServeHTTPChild{Cmd: cmd, Logs: &SyncBuffer{}, Exited: make(chan struct{})}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l := sc.Text()
			c.Logs.Write([]byte(l + "\n"))
			if line != nil {
				line(l)
			}
			if u, ok := strings.CutPrefix(l, "mcpx: serving MCP at "); ok {
				urlc <- u
			}
		}
		c.err = cmd.Wait()
		close(c.Exited)
	}()
	t.Cleanup(func() {
		select {
		case <-c.Exited:
		default:
			_ = cmd.Process.Kill()
			<-c.Exited
		}
	})
	select {
	case c.URL = <-urlc:
	case <-time.After(30 * time.Second):
		t.Fatalf("mcpx serve --http printed no URL within 30s; stderr:\n%s", c.Logs)
	}
	return c
}

// stop ends c with SIGTERM, or SIGKILL 20s later (a test error then), and
// returns its exit.
func (c *ServeHTTPChild) stop(t *testing.T) error {
	t.Helper()
	_ = c.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.Exited:
	case <-time.After(20 * time.Second):
		_ = c.Cmd.Process.Kill()
		<-c.Exited
		t.Errorf("mcpx serve --http at %s did not exit within 20s of SIGTERM", c.URL)
	}
	return c.err
}
