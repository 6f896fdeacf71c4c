package supervise

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"mcpx/internal/config"
	"mcpx/internal/ptytest"
)

// terminalHelperEnv makes the test binary run terminalHelper: the part of
// TestUpstreamHasNoTerminal that runs with a controlling terminal.
const terminalHelperEnv = "MCPX_SUPERVISE_TERMINAL_HELPER"

// ttyProbe prints whether it can open the controlling terminal.
const ttyProbe = "if (: >/dev/tty) 2>/dev/null; then echo tty; else echo none; fi"

// TestUpstreamHasNoTerminal: run by an mcpx that has a controlling
// terminal, an upstream under the shim has none (it shares mcpx's session,
// so the shim gives the terminal up), while one started directly still
// has it. The helper runs the test binary on a pseudo-terminal it leads.
func TestUpstreamHasNoTerminal(t *testing.T) {
	if os.Getenv(terminalHelperEnv) != "" {
		terminalHelper(t)
		return
	}
	pts, ptmx := ptytest.Open(t)
	copied := make(chan struct{})
	go func() { // what anyone writes there
		defer close(copied)
		_, _ = io.Copy(io.Discard, ptmx)
	}()
	defer func() {
		pts.Close()
		ptmx.Close()
		<-copied
	}()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestUpstreamHasNoTerminal$")
	cmd.Env = append(os.Environ(), terminalHelperEnv+"=1")
	cmd.Stdin = pts
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &unix.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Run(); err != nil {
		t.Fatalf("the helper: %v\n%s", err, out.String())
	}
	for _, want := range []string{"mcpx: tty", "direct: tty", "shim: none"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the helper said %q, want %q in it", out.String(), want)
		}
	}
}

// terminalHelper reports whether it, an upstream started directly and
// one under the shim can open the controlling terminal.
func terminalHelper(t *testing.T) {
	fmt.Printf("mcpx: %s\n", probe(t, "sh", "-c", ttyProbe))
	for name, sup := range supervisionModes(t) {
		p, err := Start(&config.Server{Name: "t", Command: "sh", Args: []string{"-c", ttyProbe}}, sup)
		if err != nil {
			t.Fatal(err)
		}
		drained := make(chan struct{})
		go func() { // until the child's stderr ends
			defer close(drained)
			_, _ = io.Copy(io.Discard, p.Stderr)
		}()
		b, err := io.ReadAll(p.Stdout)
		if err != nil {
			t.Fatal(err)
		}
		waitDone(t, p, 10*time.Second)
		p.Stdout.Close()
		p.Stderr.Close()
		<-drained
		fmt.Printf("%s: %s\n", name, strings.TrimSpace(string(b)))
	}
}

// probe runs a command in this process's session and returns its output.
func probe(t *testing.T, name string, args ...string) string {
	b, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
