package relay

import (
	"slices"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// TestUpstreamStopsReading: an upstream that stops reading its stdin (its
// pipe fills up, then every write to it would block) must not take mcpx's
// timers, cancels or shutdown with it. Both calls end by their hard maximum
// on time, including one whose 300 KB of arguments can never be written,
// and mcpx still shuts down when the host leaves (the harness bounds it).
func TestUpstreamStopsReading(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := harness.WriteServers(t, e, nil, map[string]any{"deaf": harness.FixtureServer("deaf", map[string]any{"maxTimeout": "1s"})})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		first := h.Request("tools/call", map[string]any{"name": "deaf__work", "arguments": map[string]any{}})
		big := strings.Repeat("x", 300<<10)
		start := time.Now()
		second := h.Request("tools/call", map[string]any{"name": "deaf__work", "arguments": map[string]any{"blob": big}})
		for _, id := range []jsonrpc.ID{first, second} {
			m := h.Response(id, harness.WaitLong)
			if m.Error == nil || m.Error.Code != -31001 || !strings.Contains(m.Error.Message, "hard maximum of 1s") {
				t.Fatalf("call %s: got %s, want the hard maximum's -31001", id, m.Encode())
			}
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("the calls' errors came %s after the second call: a blocked write held them", took)
		}
		// A ping still gets its answer: nothing in mcpx waits on the upstream.
		h.Result(h.Request("ping", nil), harness.WaitLong)
	})
}

// TestHeartbeatKeepsCallAlive: progress that repeats its value (a common
// heartbeat) shows the upstream is alive and resets the idle timer, but
// only increasing values reach the host, as the spec requires.
func TestHeartbeatKeepsCallAlive(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := harness.WriteServers(t, e, nil, map[string]any{"hb": harness.FixtureServer("heartbeat", map[string]any{"idleTimeout": "350ms"})})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		id := h.Request("tools/call", map[string]any{"name": "hb__work", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": "hb"}})
		res := h.Result(id, harness.WaitLong) // 1.2s of heartbeats outlive the 350ms idle timer
		if !strings.Contains(string(res), "done") {
			t.Fatalf("result = %s", res)
		}
		var got []float64
		for _, r := range h.Received() {
			if p, ok := harness.AsProgress(t, r); ok {
				got = append(got, p.Progress)
			}
		}
		if want := []float64{1, 2, 3}; !slices.Equal(got, want) {
			t.Errorf("progress the host saw = %v, want %v (strictly increasing)", got, want)
		}
	})
}

// TestStartupTimeoutZero: startupTimeout 0 means no timer, not "fail at
// once".
func TestStartupTimeoutZero(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(map[string]any{"startupTimeout": "0"}, mcpxtest.Demo{Name: "demo"})
	h := e.StartHost(mcpxtest.InProcess, cfg)
	h.Initialize("2025-11-25")
	res := h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"a": 1}}), harness.WaitLong)
	if !strings.Contains(string(res), `"a":1`) {
		t.Fatalf("result = %s", res)
	}
}

// TestFailedStartBacksOff: a server that cannot start is not respawned by
// every call: the next call within the backoff fails at once, saying when
// mcpx will try again.
func TestFailedStartBacksOff(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := harness.WriteServers(t, e, nil, map[string]any{"broken": map[string]any{"command": e.Path("no-such-command")}})
	h := e.StartHost(mcpxtest.InProcess, cfg)
	h.Initialize("2025-11-25")
	first := h.Response(h.Request("tools/call", map[string]any{"name": "broken__x"}), harness.WaitLong)
	if first.Error == nil || !strings.Contains(first.Error.Message, "no-such-command") {
		t.Fatalf("first call: %s", first.Encode())
	}
	second := h.Response(h.Request("tools/call", map[string]any{"name": "broken__x"}), harness.WaitLong)
	if second.Error == nil || !strings.Contains(second.Error.Message, "next try in") {
		t.Fatalf("second call within the backoff: %s, want an error naming the next try", second.Encode())
	}
}

// TestTimeoutSilencesStubbornUpstream: once a timer has ended a call and
// the host has its error, nothing more of that call reaches the host, even
// from an upstream that ignores the cancellation and keeps sending
// progress and finally its result.
func TestTimeoutSilencesStubbornUpstream(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo", Fields: map[string]any{"maxTimeout": "400ms"}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		id := h.Request("tools/call", map[string]any{"name": "demo__stubborn", "arguments": map[string]any{"seconds": 1.6, "steps": 8},
			"_meta": map[string]any{"progressToken": "stubborn"}})
		m := h.Response(id, harness.WaitLong)
		if m.Error == nil || m.Error.Code != -31001 {
			t.Fatalf("got %s, want the hard maximum's error", m.Encode())
		}
		// The stubborn tool finishes (result written upstream) well after.
		e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool {
			return ev.Event == demo.EventFinished && ev.Tool == "stubborn"
		})
		time.Sleep(harness.Settle) // time: late progress must not come, and no event says it did not
		all := h.Received()
		errAt := harness.ResponseIndex(all, id)
		for _, r := range all[errAt+1:] {
			if p, ok := harness.AsProgress(t, r); ok && string(p.Token) == `"stubborn"` {
				t.Errorf("progress of the timed-out call after its error: %s", r.Raw)
			}
			if r.Msg.IsResponse() && r.Msg.ID == id {
				t.Errorf("a second response to the timed-out call: %s", r.Raw)
			}
		}
	})
}
