package surface

import (
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestSurfaceLoggingOnRequestStream: log messages an HTTP upstream sends
// on a request's own stream reach that request's host, on its stream, as
// its level admits. A 2026-07-28 host's per-request logLevel goes to a
// 2026 upstream as it was; without one, no message is sent. A legacy
// host's logging/setLevel sets a legacy upstream's level, and goes to a
// 2026 upstream as the logLevel of each of its requests (else mcpx's
// default, info): such an upstream logs only for a request carrying one.
func TestSurfaceLoggingOnRequestStream(t *testing.T) {
	modernURL, _, _ := harness.StartDemoHTTP(t, "-surface")
	legacyURL, _, _ := harness.StartDemoHTTP(t, "-surface", "-era", "legacy")
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := harness.WriteServersConfig(t, e, map[string]any{
			"up":  map[string]any{"type": "http", "url": modernURL},
			"old": map[string]any{"type": "http", "url": legacyURL},
		})
		h := e.StartHost(mode, cfg)
		call := func(tool string, meta map[string]any, levels ...string) string {
			params := map[string]any{"name": tool, "arguments": map[string]any{"levels": levels, "message": "m"}}
			if meta != nil {
				params["_meta"] = meta
			}
			return harness.ResultText(t, h.Result(h.Request("tools/call", params), harness.WaitLong))
		}
		messages := func() []string {
			var out []string
			for _, r := range h.Received() {
				if r.Msg.Method == "notifications/message" {
					out = append(out, string(r.Raw))
				}
			}
			return out
		}

		if got := call("up__log", mcpxtest.ModernMeta(map[string]any{"io.modelcontextprotocol/logLevel": "warning"}), "info", "warning", "error"); got != "sent: warning,error" {
			t.Errorf("the 2026 upstream says %q: it did not get the host's logLevel", got)
		}
		want := []string{
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"warning: m","level":"warning","logger":"demo"}}`,
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"error: m","level":"error","logger":"demo"}}`,
		}
		if got := messages(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("messages = %q, want %q", got, want)
		}
		if got := call("up__log", mcpxtest.ModernMeta(nil), "error"); got != "sent: " {
			t.Errorf("without logLevel the 2026 upstream says %q, want nothing sent", got)
		}
		bad := rpcError(t, h, h.Request("tools/call", map[string]any{"name": "up__log", "_meta": mcpxtest.ModernMeta(map[string]any{"io.modelcontextprotocol/logLevel": "loud"})}))
		wantRPCError(t, "bad logLevel", bad, -32602, "logLevel")
		if n := len(messages()); n != 2 {
			t.Errorf("%d messages after the calls without a level, want still 2", n)
		}

		legacy := e.StartHost(mode, cfg)
		legacy.Initialize("2025-11-25")
		legacy.Result(legacy.Request("logging/setLevel", map[string]any{"level": "error"}), harness.WaitLong)
		if got := harness.ResultText(t, legacy.Result(legacy.Request("tools/call", map[string]any{"name": "old__log", "arguments": map[string]any{"levels": []string{"warning", "error"}, "message": "n"}}), harness.WaitLong)); got != "sent: error" {
			t.Errorf("the legacy upstream says %q, want it set to error", got)
		}
		legacy.WaitFor(harness.WaitLong, "the error message on the call's stream", func(r mcpxtest.Received) bool {
			return string(r.Raw) == `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"error: n","level":"error","logger":"demo"}}`
		})
		if got := harness.ResultText(t, legacy.Result(legacy.Request("tools/call", map[string]any{"name": "up__log", "arguments": map[string]any{"levels": []string{"warning", "error"}, "message": "o"}}), harness.WaitLong)); got != "sent: error" {
			t.Errorf("the 2026 upstream says %q to a legacy host set to error, want the host's level as its logLevel", got)
		}
		legacy.WaitFor(harness.WaitLong, "the 2026 upstream's error message on the legacy call's stream", func(r mcpxtest.Received) bool {
			return string(r.Raw) == `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"error: o","level":"error","logger":"demo"}}`
		})
		fresh := e.StartHost(mode, cfg)
		fresh.Initialize("2025-06-18")
		if got := harness.ResultText(t, fresh.Result(fresh.Request("tools/call", map[string]any{"name": "up__log", "arguments": map[string]any{"levels": []string{"debug", "info"}, "message": "p"}}), harness.WaitLong)); got != "sent: info" {
			t.Errorf("the 2026 upstream says %q to a legacy host that set no level, want mcpx's default (info)", got)
		}
	})
}
