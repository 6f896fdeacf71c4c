package daemon

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestIdleStop: a server with an idle stop of 1 s is stopped once it has
// gone that long without a call, a call in flight keeps it up however long
// it runs, a listing of a stopped server does not start it (its tools are
// known), and the next call starts it again.
func TestIdleStop(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo", Args: []string{"-era", "legacy"}, Fields: map[string]any{"idleStop": "1s"}})
		marker := e.RecordPath("demo") // on the demo's command line only
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		listed := h.Result(h.Request("tools/list", nil), harness.WaitLong)
		// A call three times as long as the idle stop.
		slow := h.Request("tools/call", map[string]any{"name": "demo__wait", "arguments": map[string]any{"seconds": 3}})
		h.Result(slow, harness.WaitLong)
		if n := harness.CountEvents(e.Records("demo"), demo.EventInitialize); n != 1 {
			t.Fatalf("the demo started %d times during a call longer than its idle stop, want 1", n)
		}
		took := harness.WaitProcs(t, marker, 0, harness.WaitLong)
		t.Logf("%s: the idle server's processes were gone %s after its last call ended (idle stop 1s)", mode, took.Round(10*time.Millisecond))
		if mode == mcpxtest.Daemon {
			out, _, _ := e.Run(harness.WaitLong, "status", "--config", cfg)
			if !strings.Contains(out, "stopped") {
				t.Errorf("mcpx status does not say the server stopped:\n%s", out)
			}
			// A new host of the same daemon learns what the stopped
			// server offers without starting it.
			other := e.StartHost(mode, cfg)
			other.Initialize("2025-11-25")
			if n := harness.UpstreamProcs(t, marker); n != 0 {
				t.Errorf("a new host's initialize started %d processes of the stopped server", n)
			}
			other.Close()
		}
		again := h.Result(h.Request("tools/list", nil), harness.WaitLong)
		if string(again) != string(listed) {
			t.Errorf("the listing of a stopped server differs:\n%s\nwant\n%s", again, listed)
		}
		if n := harness.UpstreamProcs(t, marker); n != 0 {
			t.Errorf("listing the tools of a stopped server started %d processes", n)
		}
		res := h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"x": 1}}), harness.WaitLong)
		if !strings.Contains(string(res), `"x":1`) {
			t.Errorf("the call after an idle stop: %s", res)
		}
		if n := harness.CountEvents(e.Records("demo"), demo.EventInitialize); n != 2 {
			t.Errorf("the demo started %d times, want 2 (the call after the idle stop starts it)", n)
		}
	})
}

// TestEagerStart: an eager server starts with mcpx, before any host asks
// for it, and is never stopped for being idle.
func TestEagerStart(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo", Args: []string{"-era", "legacy"}, Fields: map[string]any{"eager": true, "idleStop": "1s"}})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25") // nothing that needs the server
	e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool { return ev.Event == demo.EventInitialize })
	time.Sleep(2 * time.Second) // two idle stops
	if n := harness.UpstreamProcs(t, e.RecordPath("demo")); n == 0 {
		t.Fatal("the eager server was stopped for being idle")
	}
	if n := harness.CountEvents(e.Records("demo"), demo.EventInitialize); n != 1 {
		t.Errorf("the eager server started %d times, want 1", n)
	}
}

// TestCrashLoopBacksOff: an eager server that crashes 0.7 s after each
// start is restarted at once after its first crash, then after waits that
// grow (1 s, 2 s ...), and mcpx status says so.
func TestCrashLoopBacksOff(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	starts := e.Path("starts.log")
	srv := harness.FixtureServer("crashloop", nil)
	srv["eager"] = true
	srv["env"].(map[string]string)[harness.StartsEnv] = starts
	cfg := harness.WriteServers(t, e, nil, map[string]any{"loop": srv})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")

	type life struct{ start, exit time.Time }
	read := func() []life {
		b, _ := os.ReadFile(starts)
		var out []life
		for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
			what, ns, ok := strings.Cut(line, " ")
			n, err := strconv.ParseInt(ns, 10, 64)
			if !ok || err != nil {
				continue
			}
			at := time.Unix(0, n)
			switch what {
			case "start":
				out = append(out, life{start: at})
			case "exit":
				if len(out) > 0 {
					out[len(out)-1].exit = at
				}
			}
		}
		return out
	}
	deadline := time.Now().Add(3 * harness.WaitLong)
	var lives []life
	for lives = read(); len(lives) < 4; lives = read() {
		if time.Now().After(deadline) {
			t.Fatalf("%d starts of the crash-looping server, want 4", len(lives))
		}
		time.Sleep(20 * time.Millisecond)
	}
	out, _, _ := e.Run(harness.WaitLong, "status", "--config", cfg)
	if !strings.Contains(out, "early crash(es) in a row") {
		t.Errorf("mcpx status does not show the crash loop:\n%s", out)
	}
	var gaps []string
	for i := 1; i < 4; i++ {
		gap := lives[i].start.Sub(lives[i-1].exit)
		gaps = append(gaps, gap.Round(10*time.Millisecond).String())
		// The wait before start i+1: none after the first crash, then
		// startBackoff(1) = 1s, startBackoff(2) = 2s.
		if want := []time.Duration{0, time.Second, 2 * time.Second}[i-1]; gap < want {
			t.Errorf("restart %d began %s after the crash, want at least %s", i, gap, want)
		}
	}
	t.Logf("crash -> restart: %s (backoff 0, 1s, 2s, then 4s ... up to 1m)", strings.Join(gaps, ", "))
}
