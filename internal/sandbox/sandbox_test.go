package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// testHost is a Host for these tests: "echo" answers its params, "fail"
// fails with its params as text, "block" waits for its ctx to end and
// records the cause.
type testHost struct {
	mu      sync.Mutex
	in, max int
	causes  []error
	notes   []string
	lines   []string
	started chan struct{}
}

func (h *testHost) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	h.mu.Lock()
	h.in++
	h.max = max(h.max, h.in)
	h.mu.Unlock()
	defer func() { h.mu.Lock(); h.in--; h.mu.Unlock() }()
	switch method {
	case "echo":
		return params, nil
	case "fail":
		return nil, errors.New(string(params))
	case "block":
		if h.started != nil {
			h.started <- struct{}{}
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			return nil, errors.New("never cancelled")
		}
		h.mu.Lock()
		h.causes = append(h.causes, context.Cause(ctx))
		h.mu.Unlock()
		return nil, context.Cause(ctx)
	}
	return nil, errors.New("no method " + method)
}

func (h *testHost) Notify(kind string, data json.RawMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notes = append(h.notes, kind+" "+string(data))
}

func (h *testHost) Log(line string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, line)
}

// prelude gives scripts call(method, params) and note(kind, data).
const prelude = `function (host) { globalThis.call = host.call; globalThis.note = host.notify; }`

func testPool(t *testing.T, mem int64) *Pool {
	t.Helper()
	return NewPool(PoolOptions{Executable: testExecutable(t), Memory: mem})
}

func testExecutable(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func run(t *testing.T, p *Pool, code string, lim Limits) (*Result, *testHost, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := &testHost{}
	res, err := p.Exec(ctx, Script{Code: code, Prelude: prelude, Limits: lim}, h)
	return res, h, err
}

func TestValueConsoleAndTypeScript(t *testing.T) {
	p := testPool(t, 0)
	res, h, err := run(t, p, `
		interface Point { x: number; y?: number }
		const p: Point = { x: 2 };
		console.log("hi", p, [1, "a"]);
		await sleep(5);
		let fired = false;
		setTimeout(() => { fired = true; }, 1);
		await sleep(20);
		note("progress", { value: 1 });
		return { ...p, y: p.y ?? 3, fired, echoed: await call("echo", { a: [1, 2] }) };`, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Value), `{"x":2,"y":3,"fired":true,"echoed":{"a":[1,2]}}`; got != want {
		t.Errorf("value %s, want %s", got, want)
	}
	if got := strings.Join(res.Console, "\n"); got != `hi {"x":2} [1,"a"]` {
		t.Errorf("console %q", got)
	}
	if len(h.lines) != 1 || len(h.notes) != 1 || h.notes[0] != `progress {"value":1}` {
		t.Errorf("host saw lines %q notes %q", h.lines, h.notes)
	}
	if res.Calls != 1 {
		t.Errorf("calls %d, want 1", res.Calls)
	}
}

func TestUndefinedAndErrors(t *testing.T) {
	p := testPool(t, 0)
	for _, tc := range []struct{ code, want string }{
		{`throw new TypeError("nope")`, "TypeError: nope"},
		{`await call("fail", "upstream says no")`, `"upstream says no"`},
		{`const x = ;`, "does not compile: line 1"},
		{`import fs from "fs"; return 1`, "does not compile"},
		{`await new Promise(() => {})`, "nothing is left to settle"},
		{`const a: any = {}; a.self = a; return a`, "cannot be written as JSON"},
		{`return "x".repeat(2000)`, "result size limit (1000 bytes)"},
		{`function f(): number { return f() + 1 } f()`, "call stack"},
	} {
		_, _, err := run(t, p, tc.code, Limits{MaxResultBytes: 1000})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.code, err, tc.want)
		}
	}
	res, _, err := run(t, p, `console.log(1)`, Limits{})
	if err != nil || res.Value != nil {
		t.Errorf("a script that returns nothing: value %s, error %v", res.Value, err)
	}
}

// TestNoAmbientAuthority: nothing reaches outside the script but the
// prelude's API.
func TestNoAmbientAuthority(t *testing.T) {
	p := testPool(t, 0)
	for _, name := range []string{"require", "fetch", "process", "module", "exports", "Deno", "Bun",
		"XMLHttpRequest", "WebSocket", "__host", "host", "os", "fs", "global", "Buffer", "importScripts"} {
		res, _, err := run(t, p, `return typeof `+name, Limits{})
		if err != nil || string(res.Value) != `"undefined"` {
			t.Errorf("typeof %s: %s, %v; want undefined", name, res.Value, err)
		}
	}
	for _, code := range []string{`await import("fs")`, `require("fs")`, `fetch("http://127.0.0.1/")`, `process.env`,
		`return eval("1\n//# sourceMappingURL=/etc/passwd") + 1`} {
		res, _, err := run(t, p, code, Limits{})
		if code[0] == 'r' && strings.HasPrefix(code, "return eval") {
			if err != nil || string(res.Value) != "2" {
				t.Errorf("%s: %s, %v", code, res.Value, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s succeeded: %s", code, res.Value)
		}
	}
}

func TestConcurrencyAndCallCaps(t *testing.T) {
	p := testPool(t, 0)
	res, h, err := run(t, p, `
		const all = await Promise.all(Array.from({ length: 20 }, (_, i) => call("echo", i)));
		return all.length;`, Limits{MaxConcurrent: 3})
	if err != nil || string(res.Value) != "20" {
		t.Fatalf("value %s, error %v", res.Value, err)
	}
	if h.max > 3 {
		t.Errorf("%d calls in flight at once, over the cap of 3", h.max)
	}
	res, _, err = run(t, p, `
		for (let i = 0; i < 5; i++) await call("echo", i);
		try { await call("echo", 5) } catch (e) { return e.message }`, Limits{MaxCalls: 5})
	if err != nil || !strings.Contains(string(res.Value), "5 calls, its limit") {
		t.Errorf("sixth call: %s, %v", res.Value, err)
	}
	res, _, _ = run(t, p, `for (let i = 0; i < 1000; i++) console.log("line " + i)`, Limits{MaxOutputBytes: 100})
	if n := len(res.Console); n < 2 || n > 20 || !strings.Contains(res.Console[n-1], "beyond 100 bytes dropped") {
		t.Errorf("console past its limit: %d lines, last %q", n, res.Console[len(res.Console)-1])
	}
}
