package codemode

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/mcpxtest"
)

// TestExecCLI: mcpx exec runs a script through the daemon, exits as mcpx
// call does, and Ctrl-C stops the script and cancels its calls upstream
// as the user's interrupt.
func TestExecCLI(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	script := e.Path("script.ts")
	write := func(code string) {
		if err := os.WriteFile(script, []byte(code), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`const r: { n: number } = await tools.demo.echo({ n: 41 }); console.log("echoed"); return { n: r.n + 1 };`)
	out, errOut, code := e.Run(60*time.Second, "exec", "--config", cfg, "--quiet", script)
	if code != 0 || !strings.Contains(out, `{"n":42}`) || !strings.Contains(out, "console:\nechoed") {
		t.Errorf("exec: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	write(`throw new Error("bad input")`)
	if out, _, code := e.Run(30*time.Second, "exec", "--config", cfg, "--quiet", script); code != 1 || !strings.Contains(out, "Error: bad input") {
		t.Errorf("a failing script: code %d, stdout %q", code, out)
	}
	write(`while (true) {}`)
	if _, errOut, code := e.Run(30*time.Second, "exec", "--config", cfg, "--quiet", "--timeout", "300ms", script); code != 3 || !strings.Contains(errOut, "hard maximum of 300ms") {
		t.Errorf("a script past its timeout: code %d, stderr %q", code, errOut)
	}
	if _, _, code := e.Run(30*time.Second, "exec", "--config", cfg); code != 2 {
		t.Errorf("no script: code %d, want 2", code)
	}

	write(`await Promise.all([1, 2, 3, 4].map(() => tools.demo.wait({ seconds: 30 })))`)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := e.Command(ctx, "exec", "--config", cfg, "--quiet", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for countTool(e.Records("demo"), demo.EventRequest, "wait") < 4 {
		if time.Now().After(deadline) {
			t.Fatal("the script's calls did not reach the demo")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if cmd.ProcessState.ExitCode() != 130 {
		t.Errorf("exit after Ctrl-C: %v, want 130", err)
	}
	for len(cancels(e.Records("demo"))) < 4 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	evs := cancels(e.Records("demo"))
	if len(evs) != 4 {
		t.Fatalf("%d upstream cancels, want 4", len(evs))
	}
	for _, ev := range evs {
		if !strings.Contains(ev.Reason, "stopped: interrupted by user") {
			t.Errorf("upstream cancel reason %q", ev.Reason)
		}
	}
}
