package sandbox

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// allocated runs f and returns the bytes this process allocated meanwhile
// (no test of this package runs in parallel).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLongLineRefused: a child that writes a 60 MB line (one that does not
// check its messages) is stopped at the parent's line limit, with an
// error naming the limit, and the parent never buffers the line: what it
// allocates reading it stays within a few times the limit.
func TestLongLineRefused(t *testing.T) {
	child := filepath.Join(t.TempDir(), "child")
	if err := os.WriteFile(child, []byte("#!/bin/sh\nhead -c 60000000 /dev/zero | tr '\\0' a\necho\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := NewPool(PoolOptions{Executable: child})
	var err error
	n := allocated(func() { _, _, err = run(t, p, `return 1`, Limits{}) })
	t.Logf("the parent allocated %d KiB reading a 60 MB line: %v", n>>10, err)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitMessage || !strings.Contains(err.Error(), "message size limit (1114112 bytes)") {
		t.Errorf("error %v, want the message size limit", err)
	}
	if limit := uint64(DefaultLimits.lineLimit()); n > 4*limit {
		t.Errorf("the parent allocated %d bytes reading the line, over 4 times its limit of %d", n, limit)
	}
}

// TestMessageLimit: a call or a notification past the message size limit
// throws in the script (which may catch it) and is never sent; a script
// that does not catch it fails naming the limit; the parent allocates
// nothing near the message's size (it allocated five times its size
// reading it whole).
func TestMessageLimit(t *testing.T) {
	p := testPool(t, 0)
	var (
		res *Result
		h   *testHost
		err error
	)
	n := allocated(func() { _, h, err = run(t, p, `await call("echo", { x: "a".repeat(8e6) })`, Limits{}) })
	t.Logf("the parent allocated %d KiB for a script's 8 MB call: %v", n>>10, err)
	if err == nil || !strings.Contains(err.Error(), "the call echo is 8000008 bytes as JSON, past the script's message size limit (1048576 bytes)") {
		t.Errorf("error %v, want the call refused naming the limit", err)
	}
	if n > 16<<20 {
		t.Errorf("the parent allocated %d bytes for a refused call", n)
	}
	res, h, err = run(t, p, `
		const out = [];
		try { await call("echo", "b".repeat(2e6)) } catch (e) { out.push(e.message) }
		try { note("progress", "c".repeat(2e6)) } catch (e) { out.push(e.message) }
		out.push(await call("echo", "d".repeat(1000)));
		return out;`, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Value); !strings.Contains(got, `"the call echo is 2000002 bytes as JSON, past`) ||
		!strings.Contains(got, `"the notification progress is 2000002 bytes as JSON, past`) || !strings.Contains(got, strings.Repeat("d", 1000)) {
		t.Errorf("value %.300s", got)
	}
	if res.Calls != 1 || len(h.notes) != 0 {
		t.Errorf("the host saw %d calls and %d notifications, want the small call alone", res.Calls, len(h.notes))
	}
}

// TestLongFailureAndHTMLResult: a thrown message of 5 MB is cut, and says
// so; a result of HTML characters within the result limit is not refused
// for their escapes.
func TestLongFailureAndHTMLResult(t *testing.T) {
	p := testPool(t, 0)
	_, _, err := run(t, p, `throw new Error("x".repeat(5e6))`, Limits{})
	var se *ScriptError
	if !errors.As(err, &se) || len(se.Message) > 17<<10 || !strings.Contains(se.Message, "[cut: 5000007 bytes in all]") {
		t.Errorf("error of %d bytes, want one cut: %.200s", len(err.Error()), err)
	}
	res, _, err := run(t, p, `return "<&>".repeat(300000)`, Limits{})
	if err != nil || len(res.Value) != 900002 {
		t.Errorf("a result of HTML characters: %d bytes, %v", len(res.Value), err)
	}
}

func TestReadLine(t *testing.T) {
	mid := strings.Repeat("0123456789", 4)
	r := bufio.NewReaderSize(strings.NewReader("short\n"+mid+"\n"+strings.Repeat("x", 100)+"\n"+"tail"), 16)
	limit := func() int { return 50 }
	var buf []byte
	var err error
	if buf, err = readLine(r, buf, limit); err != nil || string(buf) != "short\n" {
		t.Errorf("first line %q, %v", buf, err)
	}
	if buf, err = readLine(r, buf, limit); err != nil || string(buf) != mid+"\n" {
		t.Errorf("a line of three chunks: %q, %v", buf, err)
	}
	if buf, err = readLine(r, buf, limit); !errors.Is(err, errLineTooLong) || len(buf) > 50 {
		t.Errorf("long line: %d bytes, %v", len(buf), err)
	}
	r = bufio.NewReaderSize(strings.NewReader("last line, no newline"), 16)
	if buf, err = readLine(r, buf, limit); err != nil || string(buf) != "last line, no newline" {
		t.Errorf("last line %q, %v", buf, err)
	}
}
