package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/ptytest"
)

// openPTY opens a pseudo-terminal: the terminal end a program writes to,
// raw (no newline translation), and the end that reads what it wrote.
func openPTY(t *testing.T) (tty, reader *os.File) {
	t.Helper()
	s, m := ptytest.Open(t)
	if _, err := term.MakeRaw(int(s.Fd())); err != nil {
		t.Fatal(err)
	}
	return s, m
}

// runOnTerminal runs mcpx with args, its stdout a terminal, and returns
// what it wrote there and its exit code.
func runOnTerminal(t *testing.T, e *mcpxtest.Env, args ...string) (string, int) {
	t.Helper()
	tty, reader := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := e.Command(ctx, args...)
	cmd.Stdout = tty
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	tty.Close() // the reader ends when no one holds the terminal
	var out bytes.Buffer
	if _, err := io.Copy(&out, reader); err != nil && !errors.Is(err, unix.EIO) {
		t.Fatalf("reading the terminal: %v", err)
	}
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
		t.Logf("mcpx %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out.String(), code
}

// hostile is what an upstream or a script sends to take over the user's
// terminal: set the clipboard (OSC 52), clear the screen, a link whose
// target is hidden (OSC 8), and an 8-bit CSI.
const hostile = "\x1b]52;c;aGk=\x07\x1b[2J\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\\u009b31m"

// controls reports the control characters of s other than newline and
// tab.
func controls(s string) []rune {
	var found []rune
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
			found = append(found, r)
		}
	}
	return found
}

// TestCLITerminalEscapes: what an upstream or a script sends reaches the
// user's terminal with its control characters neutralised (mcpx call's
// result, mcpx exec's result and console block), lines kept; through a
// pipe the bytes are as sent.
func TestCLITerminalEscapes(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := harness.WriteServers(t, e, nil, map[string]any{"fx": harness.FixtureServer(harness.ConformanceFixtureName, nil)})
	args := `{"name":"` + strings.NewReplacer("\x1b", `\u001b`, "\x07", `\u0007`, "\\", `\\`, "\u009b", `\u009b`).Replace(hostile) + `"}`
	script := e.Path("escapes.js")
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) } // a JS string literal
	code := "console.log(" + js(hostile) + ");\nconsole.log(\"second line\\tcolumn\");\nreturn " + js("line one\n"+hostile) + ";"
	if err := os.WriteFile(script, []byte(code), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want []string // lines of the terminal's output
	}{
		{"call", []string{"call", "--config", cfg, "--quiet", "fx.greet", args}, []string{"Hello, "}},
		{"exec", []string{"exec", "--config", cfg, "--quiet", script}, []string{"line one", "console:", "second line\tcolumn"}},
	} {
		out, code := runOnTerminal(t, e, c.args...)
		if code != 0 {
			t.Fatalf("%s: exit %d, output %q", c.name, code, out)
		}
		if bad := controls(out); len(bad) > 0 {
			t.Errorf("%s wrote control characters %q to the terminal: %q", c.name, bad, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the terminal got %q, want it to hold %q", c.name, out, w)
			}
		}
		if !strings.Contains(out, "click") {
			t.Errorf("%s: the text around the sequences is gone: %q", c.name, out)
		}
		piped, _, code := e.Run(time.Minute, c.args...)
		if code != 0 || !strings.Contains(piped, hostile) {
			t.Errorf("%s through a pipe: exit %d, %q; want the bytes as sent", c.name, code, piped)
		}
	}
}
