package http

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// TCP faults between mcpx and an HTTP upstream (the demo, in each era),
// put there by Toxiproxy: latency, a connection cut mid-call, a blackhole
// that swallows the upstream's answers, a connection refused. For each:
// what the host sees, how soon, and that the next call works once the
// fault is gone.

// faultCall sends a call and waits for its answer, which must come.
func faultCall(t *testing.T, h *mcpxtest.Host, tool string, args map[string]any, meta map[string]any) (*jsonrpc.Message, time.Duration) {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	start := time.Now()
	m := h.Response(h.Request("tools/call", params), harness.WaitLong)
	return m, time.Since(start)
}

// nextCallWorks calls echo until it succeeds: a fault just removed may
// leave one failed start behind, whose backoff the next calls wait out.
func nextCallWorks(t *testing.T, h *mcpxtest.Host, what string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		m, _ := faultCall(t, h, "demo__echo", map[string]any{"after": what}, nil)
		if m.Error == nil {
			if !strings.Contains(string(m.Result), what) {
				t.Fatalf("echo after %s: %s", what, m.Result)
			}
			return time.Since(start)
		}
		if time.Since(start) > harness.WaitLong {
			t.Fatalf("no call worked within %s after %s: last %s", harness.WaitLong, what, m.Encode())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestHTTPUpstreamFaults(t *testing.T) {
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
				direct, _, _ := harness.StartDemoHTTP(t, "-era", era)
				u, err := url.Parse(direct)
				if err != nil {
					t.Fatal(err)
				}
				tp := mcpxtest.StartToxiproxy(t)
				u.Host = tp.Proxy("up", u.Host)
				e := mcpxtest.NewEnv(t)
				cfg := harness.WriteServers(t, e, nil, map[string]any{"demo": map[string]any{"type": "http", "url": u.String(), "idleTimeout": "20s"}})
				h := e.StartHost(mode, cfg)
				h.Initialize("2025-11-25")
				nextCallWorks(t, h, "start")

				// Latency: 150 ms on every answer. Slower, still right.
				tp.AddToxic("up", "slow", "latency", false, map[string]any{"latency": 150})
				m, took := faultCall(t, h, "demo__export", map[string]any{"seconds": 0.3, "steps": 3}, map[string]any{"progressToken": "slow"})
				if m.Error != nil || harness.ResultText(t, m.Result) != "exported 1000 records in 3 parts" {
					t.Fatalf("export under latency: %s", m.Encode())
				}
				vals, late := harness.ProgressValues(t, h.Received(), `"slow"`, m.ID)
				if late > 0 || len(vals) != 3 {
					t.Errorf("under latency the host saw %d progress notifications (%d after the result), want 3 before it", len(vals), late)
				}
				tp.RemoveToxic("up", "slow")
				t.Logf("%s/%s: latency 150 ms: export answered in %s with its 3 progress notifications", era, mode, took.Round(time.Millisecond))

				// The connection cut mid-call, and refused from then on. A
				// legacy stream is resumed (GET, Last-Event-ID) after the
				// server's retry delay (1 s), three times, then given up; a
				// 2026-07-28 stream cannot be resumed.
				id := h.Request("tools/call", map[string]any{"name": "demo__export", "arguments": map[string]any{"seconds": 5, "steps": 50},
					"_meta": map[string]any{"progressToken": "cut"}})
				h.WaitFor(harness.WaitLong, "the first progress of the call to cut", func(r mcpxtest.Received) bool {
					p, ok := harness.AsProgress(t, r)
					return ok && string(p.Token) == `"cut"`
				})
				cut := time.Now()
				tp.SetEnabled("up", false)
				m = h.Response(id, harness.WaitLong)
				toError := time.Since(cut)
				if m.Error == nil || !strings.Contains(m.Error.Message, `"demo"`) {
					t.Errorf("a call whose connection was cut: %s, want an error naming the upstream", m.Encode())
				}
				t.Logf("%s/%s: connection cut mid-call -> host error in %s: %d %s", era, mode, toError.Round(time.Millisecond), m.Error.Code, m.Error.Message)
				m, took = faultCall(t, h, "demo__echo", map[string]any{}, nil)
				if m.Error == nil || !strings.Contains(m.Error.Message, `"demo"`) {
					t.Errorf("a call while the upstream refuses connections: %s, want an error naming the upstream", m.Encode())
				}
				t.Logf("%s/%s: connection refused -> host error in %s: %s", era, mode, took.Round(time.Millisecond), m.Error.Message)
				tp.SetEnabled("up", true)
				t.Logf("%s/%s: the first call after the upstream came back worked %s later", era, mode, nextCallWorks(t, h, "cut").Round(time.Millisecond))

				// A blackhole: requests go through, nothing comes back. The
				// call asks for an idle timeout of 1.5 s; its answer must not
				// wait for the cancellation mcpx then sends into the hole.
				tp.AddToxic("up", "hole", "timeout", false, map[string]any{"timeout": 0})
				m, took = faultCall(t, h, "demo__echo", map[string]any{}, map[string]any{"mcpx/idleTimeoutMs": 1500})
				if m.Error == nil || m.Error.Code != -31001 {
					t.Errorf("a call into a blackhole: %s, want the idle timeout (-31001)", m.Encode())
				}
				if took > 5*time.Second {
					t.Errorf("the idle timeout of 1.5 s answered the host after %s: its answer waited for something", took)
				}
				t.Logf("%s/%s: blackhole -> host error in %s: %s", era, mode, took.Round(time.Millisecond), m.Error.Message)
				tp.RemoveToxic("up", "hole")
				t.Logf("%s/%s: the first call after the blackhole worked %s later", era, mode, nextCallWorks(t, h, "hole").Round(time.Millisecond))
			})
		})
	}
}
