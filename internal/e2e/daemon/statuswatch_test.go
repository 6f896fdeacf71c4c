package daemon

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestStatusWatchPiped: mcpx status --watch, piped, prints a line per
// change: the server ready, a call starting, its progress advancing, its
// end; and exits 3 when the daemon stops.
func TestStatusWatchPiped(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	id := h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{}})
	h.Result(id, harness.WaitLong) // the server is up

	ctx, cancel := context.WithTimeout(context.Background(), 2*harness.WaitLong)
	defer cancel()
	w := e.Command(ctx, "status", "--watch", "--config", cfg)
	out, err := w.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1000)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var seen []string
	expect := func(what string, re *regexp.Regexp) []string {
		t.Helper()
		timeout := time.After(harness.WaitLong)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("status --watch ended before %s; it printed:\n%s", what, strings.Join(seen, "\n"))
				}
				seen = append(seen, l)
				if m := re.FindStringSubmatch(l); m != nil {
					return m
				}
			case <-timeout:
				t.Fatalf("no line for %s within %s; printed:\n%s", what, harness.WaitLong, strings.Join(seen, "\n"))
			}
		}
	}
	expect("the server", regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} server demo ready pid \d+ \(starts 1\)$`))
	id = harness.SendCall(h, "50", "demo__export", map[string]any{"seconds": 2, "steps": 4}, map[string]any{"progressToken": "w"})
	m := expect("the call's start", regexp.MustCompile(`call #(\d+) demo\.export started from `))
	callID := m[1]
	expect("progress 2/4", regexp.MustCompile(`call #`+callID+` progress 2/4  exporting part 2 of 4`))
	h.Result(id, harness.WaitLong)
	expect("the call's end", regexp.MustCompile(`call #`+callID+` ended$`))

	if _, errOut, code := e.Run(harness.WaitLong, "stop", "--config", cfg); code != 0 {
		t.Fatalf("mcpx stop: %d %s", code, errOut)
	}
	expect("the daemon's end", regexp.MustCompile(`daemon stopped$`))
	var ee *exec.ExitError
	if err := w.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("status --watch ended with %v, want exit status 3", err)
	}
	t.Logf("status --watch printed:\n%s", strings.Join(seen, "\n"))
}
