package e2e

import (
	"bufio"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/mcpxtest"
)

// serveHTTPChild is `mcpx serve --http`, spawned by a test.
type serveHTTPChild struct {
	URL    string
	cmd    *exec.Cmd
	logs   *syncBuffer   // its stderr
	exited chan struct{} // closed once it has exited and its stderr has ended
	err    error         // its exit, once exited is closed
}

// startServeHTTP spawns `mcpx serve --http 127.0.0.1:0` with cfg (and
// extra arguments) in e's environment, and returns it once it has printed
// its URL, within 30s. Each line of its stderr goes to its logs, and to
// line unless nil. The caller stops it; one still running when the test
// ends is killed.
func startServeHTTP(t *testing.T, e *mcpxtest.Env, cfg string, line func(string), extra ...string) *serveHTTPChild {
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
	c := &serveHTTPChild{cmd: cmd, logs: &syncBuffer{}, exited: make(chan struct{})}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l := sc.Text()
			c.logs.Write([]byte(l + "\n"))
			if line != nil {
				line(l)
			}
			if u, ok := strings.CutPrefix(l, "mcpx: serving MCP at "); ok {
				urlc <- u
			}
		}
		c.err = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-c.exited:
		default:
			_ = cmd.Process.Kill()
			<-c.exited
		}
	})
	select {
	case c.URL = <-urlc:
	case <-time.After(30 * time.Second):
		t.Fatalf("mcpx serve --http printed no URL within 30s; stderr:\n%s", c.logs)
	}
	return c
}

// stop ends c with SIGTERM, or SIGKILL 20s later (a test error then), and
// returns its exit.
func (c *serveHTTPChild) stop(t *testing.T) error {
	t.Helper()
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
		t.Errorf("mcpx serve --http at %s did not exit within 20s of SIGTERM", c.URL)
	}
	return c.err
}
