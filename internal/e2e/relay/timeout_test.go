package relay

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// timedOut checks that call id, sent at start, ended with mcpx's timeout
// error of kind naming want, no earlier than after, and that the upstream
// request marked marker was cancelled with the reason want.
func timedOut(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host, server string, id jsonrpc.ID, start time.Time, after time.Duration, kind, want, marker string) {
	t.Helper()
	got, r := harness.ResponseError(t, h, id)
	took := r.At.Sub(start)
	if got.Code != harness.CodeTimeout || got.Kind != kind || !strings.Contains(got.Message, want) {
		t.Errorf("call %s: error %d %q kind %q after %v, want %d naming %q, kind %q", id, got.Code, got.Message, got.Kind, took, harness.CodeTimeout, want, kind)
	}
	if took < after {
		t.Errorf("call %s: the %s error came %v after the call, before the %v interval", id, kind, took, after)
	}
	up := harness.UpstreamRequest(e, server, marker)
	harness.CheckCancel(t, harness.UpstreamCancel(e, server, up.ID), want)
}

// TestIdleTimeout: a call with no progress ends after the server's idle
// timeout, not before; the host gets an error naming the timer and the
// upstream a cancel with that reason.
func TestIdleTimeout(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo", Fields: map[string]any{"idleTimeout": "700ms"}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		h.Result(h.Request("tools/list", map[string]any{}), harness.WaitLong) // the upstream is up

		start := time.Now()
		id := harness.SendCall(h, "910", "demo__wait", map[string]any{"seconds": 30}, map[string]any{"progressToken": "idle", harness.MarkerKey: "idle"})
		timedOut(t, e, h, "demo", id, start, 700*time.Millisecond, "idle_timeout", "idle timeout: no progress for 700ms", "idle")
	})
}

// TestIdleTimeoutResetByProgress: steady progress keeps a call alive well
// past the idle interval.
func TestIdleTimeoutResetByProgress(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo", Fields: map[string]any{"idleTimeout": "400ms"}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		h.Result(h.Request("tools/list", map[string]any{}), harness.WaitLong)

		start := time.Now()
		id := harness.SendCall(h, "911", "demo__export", map[string]any{"seconds": 1.2, "steps": 12}, map[string]any{"progressToken": "steady"})
		res := h.Result(id, harness.WaitLong)
		took := time.Since(start)
		if !strings.Contains(harness.ResultText(t, res), "exported") {
			t.Errorf("result = %s", res)
		}
		if took < 1200*time.Millisecond {
			t.Errorf("the export took %v, want at least its 1.2s", took)
		}
		if n := len(harness.ProgressFor(t, h, `"steady"`)); n != 12 {
			t.Errorf("host received %d progress notifications, want 12", n)
		}
		if evs := harness.Cancellations(e, "demo"); len(evs) > 0 {
			t.Errorf("upstream got cancellations:\n%s", harness.Describe(evs))
		}
		t.Logf("%s: a 1.2s export with progress every 100ms outlived a 400ms idle timeout (took %v)", mode, took.Round(time.Millisecond))
	})
}

// TestHardTimeout: the hard maximum fires under steady progress.
func TestHardTimeout(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo", Fields: map[string]any{"maxTimeout": "1s"}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		h.Result(h.Request("tools/list", map[string]any{}), harness.WaitLong)

		start := time.Now()
		id := harness.SendCall(h, "912", "demo__export", map[string]any{"seconds": 10, "steps": 100}, map[string]any{"progressToken": "hard", harness.MarkerKey: "hard"})
		timedOut(t, e, h, "demo", id, start, time.Second, "hard_timeout", "hard maximum of 1s reached", "hard")
		if n := len(harness.ProgressFor(t, h, `"hard"`)); n < 5 {
			t.Errorf("host received %d progress notifications before the hard maximum, want steady progress", n)
		}
	})
}

// TestTimeoutHostAsks: a host may ask for shorter timeouts in _meta
// (mcpx/idleTimeoutMs, mcpx/maxTimeoutMs, or mcpx_call's arguments), never
// longer ones; those keys are mcpx's and do not go upstream. The idle and
// the hard timeouts are configured on different servers, so that each
// call has one timer to fire.
func TestTimeoutHostAsks(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil,
			mcpxtest.Demo{Name: "idle", Fields: map[string]any{"idleTimeout": "600ms"}},
			mcpxtest.Demo{Name: "hard", Fields: map[string]any{"maxTimeout": "1200ms"}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		h.Result(h.Request("tools/list", map[string]any{}), harness.WaitLong)

		wait := map[string]any{"seconds": 30}
		steady := map[string]any{"seconds": 10, "steps": 100}
		start := time.Now()
		shorterIdle := harness.SendCall(h, "920", "idle__wait", wait, map[string]any{"mcpx/idleTimeoutMs": 250, harness.MarkerKey: "shorter-idle"})
		longerIdle := harness.SendCall(h, "921", "idle__wait", wait, map[string]any{"mcpx/idleTimeoutMs": 60000, harness.MarkerKey: "longer-idle"})
		shorterMax := harness.SendCall(h, "922", "hard__export", steady, map[string]any{"mcpx/maxTimeoutMs": 500, "progressToken": 922, harness.MarkerKey: "shorter-max"})
		longerMax := harness.SendCall(h, "923", "hard__export", steady, map[string]any{"mcpx/maxTimeoutMs": 60000, "progressToken": 923, harness.MarkerKey: "longer-max"})
		metaCall := harness.SendCall(h, "924", "mcpx_call", map[string]any{"name": "idle__wait", "arguments": wait, "idleTimeoutSeconds": 0.3},
			map[string]any{harness.MarkerKey: "meta-call"})

		timedOut(t, e, h, "idle", shorterIdle, start, 250*time.Millisecond, "idle_timeout", "idle timeout: no progress for 250ms", "shorter-idle")
		timedOut(t, e, h, "idle", longerIdle, start, 600*time.Millisecond, "idle_timeout", "idle timeout: no progress for 600ms", "longer-idle")
		timedOut(t, e, h, "hard", shorterMax, start, 500*time.Millisecond, "hard_timeout", "hard maximum of 500ms reached", "shorter-max")
		timedOut(t, e, h, "hard", longerMax, start, 1200*time.Millisecond, "hard_timeout", "hard maximum of 1.2s reached", "longer-max")
		timedOut(t, e, h, "idle", metaCall, start, 300*time.Millisecond, "idle_timeout", "idle timeout: no progress for 300ms", "meta-call")

		for server, markers := range map[string][]string{"idle": {"shorter-idle", "longer-idle", "meta-call"}, "hard": {"shorter-max", "longer-max"}} {
			for _, marker := range markers {
				ev := harness.UpstreamRequest(e, server, marker)
				for k := range metaOf(t, ev) {
					if strings.HasPrefix(k, "mcpx/") {
						t.Errorf("%s: mcpx's own _meta key %q went upstream: %s", marker, k, ev.Meta)
					}
				}
			}
		}
	})
}

// TestTimeoutOnlyUpstreamWait: the idle timer covers the call, not the
// upstream's start: a slow-starting upstream is not cut short by an idle
// timeout shorter than its start (the start has its own timeout).
func TestTimeoutOnlyUpstreamWait(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{
			Name:   "demo",
			Args:   []string{"-era", "legacy", "-init-delay", "600ms"},
			Fields: map[string]any{"idleTimeout": "400ms", "startupTimeout": "5s"},
		})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		id := harness.SendCall(h, "930", "demo__sleep_then", map[string]any{"seconds": 0.1, "text": "slow start"}, nil)
		if got := harness.ResultText(t, h.Result(id, harness.WaitLong)); got != "slow start" {
			t.Errorf("result %q", got)
		}
		for _, ev := range e.Records("demo") {
			if ev.Event == demo.EventCancelled {
				j, _ := json.Marshal(ev)
				t.Errorf("upstream got a cancellation: %s", j)
			}
		}
	})
}
