package surface

import (
	"encoding/json"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestToolsListChanged: an upstream's notifications/tools/list_changed
// reaches hosts — a legacy host as notifications/tools/list_changed on its
// stream (mcpx advertises tools.listChanged), a 2026-07-28 host on its
// subscriptions/listen stream, acknowledged and tagged with the listen's
// id — and the next tools/list shows the new tool.
func TestToolsListChanged(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := harness.WriteServers(t, e, nil, map[string]any{"ch": harness.FixtureServer("changing", nil)})
		legacy := e.StartHost(mode, cfg)
		init := string(legacy.Initialize("2025-11-25"))
		if !strings.Contains(init, `"listChanged":true`) {
			t.Fatalf("initialize result does not advertise tools.listChanged: %s", init)
		}
		if list := string(legacy.Result(legacy.Request("tools/list", map[string]any{}), harness.WaitLong)); strings.Contains(list, "ch__more") {
			t.Fatalf("ch__more listed before it exists: %s", list)
		}

		modern := e.StartHost(mode, cfg)
		listen := modern.Request("subscriptions/listen", map[string]any{
			"_meta":         mcpxtest.ModernMeta(nil),
			"notifications": map[string]any{"toolsListChanged": true, "promptsListChanged": true},
		})
		ack := modern.WaitFor(harness.WaitLong, "the listen's acknowledgement", func(r mcpxtest.Received) bool {
			return r.Msg.Method == "notifications/subscriptions/acknowledged"
		})
		var ackP struct {
			Meta          map[string]json.RawMessage `json:"_meta"`
			Notifications map[string]bool            `json:"notifications"`
		}
		if err := json.Unmarshal(ack.Msg.Params, &ackP); err != nil {
			t.Fatal(err)
		}
		if string(ackP.Meta["io.modelcontextprotocol/subscriptionId"]) != listen.String() {
			t.Errorf("ack subscriptionId = %s, want the listen's id %s", ackP.Meta["io.modelcontextprotocol/subscriptionId"], listen)
		}
		if !ackP.Notifications["toolsListChanged"] || ackP.Notifications["promptsListChanged"] {
			t.Errorf("ack notifications = %v, want toolsListChanged only (mcpx serves no prompts)", ackP.Notifications)
		}

		// Each host makes the upstream change: in-process, each has an
		// upstream of its own; with the daemon, they share one.
		legacy.Result(legacy.Request("tools/call", map[string]any{"name": "ch__work"}), harness.WaitLong)
		modern.Result(modern.Request("tools/call", map[string]any{"name": "ch__work", "_meta": mcpxtest.ModernMeta(nil)}), harness.WaitLong)
		legacy.WaitFor(harness.WaitLong, "notifications/tools/list_changed on the legacy stream", func(r mcpxtest.Received) bool {
			return r.Msg.Method == "notifications/tools/list_changed"
		})
		tagged := modern.WaitFor(harness.WaitLong, "a tagged list_changed on the listen stream", func(r mcpxtest.Received) bool {
			return r.Msg.Method == "notifications/tools/list_changed"
		})
		if !strings.Contains(string(tagged.Msg.Params), `"io.modelcontextprotocol/subscriptionId":`+listen.String()) {
			t.Errorf("listen notification not tagged with the subscription id: %s", tagged.Raw)
		}
		if list := string(legacy.Result(legacy.Request("tools/list", map[string]any{}), harness.WaitLong)); !strings.Contains(list, `"ch__more"`) {
			t.Errorf("tools/list after the change lacks ch__more: %s", list)
		}

		// Cancelling the listen ends it without an answer.
		modern.Notify("notifications/cancelled", map[string]any{"requestId": listen.Raw()})
		modern.NoResponse(listen, harness.Settle)
	})
}

// TestToolsListChangedModernUpstream: a 2026-07-28 upstream sends
// notifications/tools/list_changed only on a subscriptions/listen stream
// its client opened, so mcpx keeps one open to each modern upstream that
// declares tools.listChanged. The upstream is the conformance fixture (the
// go-sdk, modern over stdio); test_trigger_tool_change adds a tool, and a
// host hears of it and lists it.
func TestToolsListChangedModernUpstream(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := harness.WriteServers(t, e, nil, map[string]any{"fx": harness.FixtureServer(harness.ConformanceFixtureName, nil)})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		if list := string(h.Result(h.Request("tools/list", map[string]any{}), harness.WaitLong)); strings.Contains(list, "fx__test_dynamic_tool") {
			t.Fatalf("fx__test_dynamic_tool listed before it exists: %s", list)
		}
		h.Result(h.Request("tools/call", map[string]any{"name": "fx__test_trigger_tool_change"}), harness.WaitLong)
		h.WaitFor(harness.WaitLong, "notifications/tools/list_changed", func(r mcpxtest.Received) bool {
			return r.Msg.Method == "notifications/tools/list_changed"
		})
		if list := string(h.Result(h.Request("tools/list", map[string]any{}), harness.WaitLong)); !strings.Contains(list, `"fx__test_dynamic_tool"`) {
			t.Errorf("tools/list after the change lacks fx__test_dynamic_tool: %s", list)
		}
		if mode == mcpxtest.Daemon {
			// The listen mcpx holds open is no request waiting for an
			// answer: an idle upstream shows none pending.
			u := harness.UpstreamOf(harness.StatusJSON(t, e, cfg), "fx")
			if u.State != "ready" || u.Pending != 0 {
				t.Errorf("mcpx status shows fx %s with %d pending, want ready with 0", u.State, u.Pending)
			}
		}
	})
}
