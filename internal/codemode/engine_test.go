package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"mcpx/internal/catalog"
	"mcpx/internal/config"
	"mcpx/internal/demo"
	"mcpx/internal/relay"
	"mcpx/internal/sandbox"
	"mcpx/internal/upstream"
)

// upstreamEnv makes this test binary serve the demo on stdio; the binary
// is also the scripts' child process.
const upstreamEnv = "MCPX_CODEMODE_TEST_UPSTREAM"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.ChildVerb {
		os.Exit(sandbox.RunChild(os.Args[2:]))
	}
	if os.Getenv(upstreamEnv) != "" {
		_ = demo.Serve(context.Background(), os.Stdin, os.Stdout, &demo.Options{Record: os.Getenv(upstreamEnv)})
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// testEngine is an Engine over a real relay to a demo process, whose
// events are recorded at the returned path.
func testEngine(t *testing.T, idle time.Duration) (*Engine, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	record := t.TempDir() + "/record.jsonl"
	doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"demo": map[string]any{"command": exe, "env": map[string]string{upstreamEnv: record}},
	}})
	cfg, err := config.Parse(doc, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := upstream.NewPool(cfg, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); pool.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	r := relay.New(cfg, pool, relay.NewRegistry(), nil)
	cat := catalog.New(pool, catalog.Naming{Prefix: string(cfg.ToolNames.Prefix), Separator: cfg.ToolNames.Separator}, nil)
	return New(Options{Relay: r, Catalog: cat, Pool: sandbox.NewPool(sandbox.PoolOptions{Executable: exe}), IdleTimeout: idle}), record
}

func cancelReasons(t *testing.T, record string) []string {
	t.Helper()
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ev demo.Event
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == demo.EventCancelled {
			out = append(out, ev.Reason)
		}
	}
	return out
}

// TestIdleTimer: an inner call's progress keeps a script alive past its
// idle timeout; a silent inner call does not, and is cancelled upstream
// with a reason naming the script and its idle timeout.
func TestIdleTimer(t *testing.T) {
	// The idle timeout leaves room for a loaded machine; the upstream is
	// started first, so that its start is not counted as silence.
	e, record := testEngine(t, 3*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := e.Exec(ctx, Script{Name: "warm", Code: `return await tools.demo.echo({ n: 1 })`}); err != nil || out.Err != nil {
		t.Fatalf("starting the upstream: %v, %v", out.Err, err)
	}
	out, err := e.Exec(ctx, Script{Name: "busy", Code: `return await tools.demo.export({ seconds: 1.2, steps: 12 })`})
	if err != nil || out.Err != nil || !strings.Contains(string(out.Value), `"parts":12`) {
		t.Fatalf("a script whose call sends progress: %s, %v, %v", out.Value, out.Err, err)
	}
	out, err = e.Exec(ctx, Script{Name: "quiet", Code: `await tools.demo.wait({ seconds: 20 })`})
	var se *StopError
	if err != nil || !errors.As(out.Err, &se) || !strings.Contains(out.Err.Error(), "script quiet stopped: idle timeout: no progress for 3s") {
		t.Fatalf("a script whose call is silent: %v, %v", out.Err, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(cancelReasons(t, record)) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := cancelReasons(t, record); len(got) != 1 || got[0] != "script quiet stopped: idle timeout: no progress for 3s" {
		t.Errorf("upstream cancels %q", got)
	}
}

// TestScriptEndCancelsCalls: calls a script leaves running when it returns
// are cancelled upstream, naming the script's end.
func TestScriptEndCancelsCalls(t *testing.T) {
	e, record := testEngine(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := e.Exec(ctx, Script{Name: "hasty", Code: `
		tools.demo.wait({ seconds: 10 }); tools.demo.wait({ seconds: 10 });
		await tools.demo.echo({ n: 1 });
		return "done"`})
	if err != nil || out.Err != nil || string(out.Value) != `"done"` {
		t.Fatalf("%s, %v, %v", out.Value, out.Err, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(cancelReasons(t, record)) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got := cancelReasons(t, record)
	if len(got) != 2 || got[0] != "script hasty stopped: the script ended before its call did" || got[1] != got[0] {
		t.Errorf("upstream cancels %q", got)
	}
}
