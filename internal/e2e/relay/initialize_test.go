package relay

import (
	"strings"
	"testing"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// initializeRequest waits for the demo's record of mcpx's initialize.
func initializeRequest(e *mcpxtest.Env, server string) demo.Event {
	e.T.Helper()
	return e.WaitRecord(server, harness.WaitLong, func(ev demo.Event) bool {
		return ev.Event == demo.EventRequest && ev.Method == "initialize"
	})
}

// noInitializeCancel checks that the demo never saw a cancellation of its
// initialize (nor of anything else).
func noInitializeCancel(t *testing.T, e *mcpxtest.Env, server string, init demo.Event) {
	t.Helper()
	for _, ev := range harness.Cancellations(e, server) {
		if string(ev.RequestID) == string(init.ID) {
			t.Errorf("mcpx cancelled initialize (id %s): %+v", init.ID, ev)
		} else {
			t.Errorf("upstream got a cancellation: requestId %s reason %q", ev.RequestID, ev.Reason)
		}
	}
}

// TestInitializeTimeoutNotCancelled: an upstream slower to initialize than
// its startup timeout fails the host's call with a clear error, and is
// dropped, never sent a cancellation for initialize.
func TestInitializeTimeoutNotCancelled(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{
			Name: "demo",
			// The bound covers the process's start as well: a race-built
			// mcpx on a loaded machine takes most of half a second to
			// start, and then never gets to send initialize.
			Args:   []string{"-era", "legacy", "-init-delay", "6s"},
			Fields: map[string]any{"startupTimeout": "3s"},
		})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		id := harness.SendCall(h, "940", "demo__wait", map[string]any{"seconds": 1}, nil)
		got, _ := harness.ResponseError(t, h, id)
		if got.Code != -31000 || !strings.Contains(got.Message, `upstream "demo" did not finish starting within 3s`) {
			t.Errorf("error %d %q, want -31000 saying the upstream did not start within 3s", got.Code, got.Message)
		}
		init := initializeRequest(e, "demo")
		// mcpx dropped the process: the demo ends its initialize unanswered.
		e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool {
			return ev.Event == demo.EventFinished && string(ev.ID) == string(init.ID)
		})
		noInitializeCancel(t, e, "demo", init)
		t.Logf("%s: error %d %q", mode, got.Code, got.Message)
	})
}

// TestInitializeHostCancelsWhileStarting: the host cancels its call while
// the upstream is still initializing. Nothing is cancelled upstream (the
// call had not been sent; initialize never is), the start completes, and a
// later call works. The host speaks 2026-07-28: a legacy host's initialize
// itself waits for the upstreams to start (to learn their capabilities),
// so its first call would find the upstream ready.
func TestInitializeHostCancelsWhileStarting(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{
			Name:   "demo",
			Args:   []string{"-era", "legacy", "-init-delay", "800ms"},
			Fields: map[string]any{"startupTimeout": "5s"},
		})
		h := e.StartHost(mode, cfg)
		id := harness.SendCall(h, "941", "demo__wait", map[string]any{"seconds": 0.1}, mcpxtest.ModernMeta(map[string]any{harness.MarkerKey: "while-starting"}))
		init := initializeRequest(e, "demo")
		harness.Cancel(h, "941", "not waiting for the start")
		h.NoResponse(id, harness.Settle)

		// The start was not cut short.
		e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool {
			return ev.Event == demo.EventInitialize && string(ev.ID) == string(init.ID)
		})
		next := harness.SendCall(h, "942", "demo__sleep_then", map[string]any{"seconds": 0, "text": "after the start"}, mcpxtest.ModernMeta(nil))
		if got := harness.ResultText(t, h.Result(next, harness.WaitLong)); got != "after the start" {
			t.Errorf("call after the start = %q", got)
		}
		if _, sent := recordedRequest(e, "demo", "while-starting"); sent {
			t.Errorf("the call cancelled during the start still went upstream")
		}
		noInitializeCancel(t, e, "demo", init)
		starts := 0
		for _, ev := range e.Records("demo") {
			if ev.Event == demo.EventRequest && ev.Method == "initialize" {
				starts++
			}
		}
		if starts != 1 {
			t.Errorf("upstream saw %d initialize requests, want 1 (the start must survive the cancel)", starts)
		}
	})
}

// TestInitializeRefused: an upstream that refuses initialize (here a
// modern-only server configured as 2025-11-25) fails the host's call with
// mcpx's own error naming the handshake, not with the upstream's
// handshake error, which would read as the host's call being invalid.
func TestInitializeRefused(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{
			Name:   "demo",
			Args:   []string{"-era", "modern"},
			Fields: map[string]any{"protocolVersion": "2025-11-25"},
		})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		id := harness.SendCall(h, "943", "demo__echo", map[string]any{}, nil)
		got, _ := harness.ResponseError(t, h, id)
		if got.Code != -31000 || got.Kind != "upstream_failed" ||
			!strings.Contains(got.Message, `connecting to upstream "demo": initialize:`) {
			t.Errorf("error %d %q kind %q, want -31000 kind upstream_failed naming the failed initialize", got.Code, got.Message, got.Kind)
		}
		init := initializeRequest(e, "demo")
		noInitializeCancel(t, e, "demo", init)
	})
}
