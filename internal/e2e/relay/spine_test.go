package relay

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mcpx/internal/mcpxtest"
)

// TestExportWithProgress is the spine: a legacy host calls the demo's slow
// export through mcpx and sees its progress, in order, under its own
// token, before the result.
func TestExportWithProgress(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		list := h.Result(h.Request("tools/list", map[string]any{}), 30*time.Second)
		if !strings.Contains(string(list), `"name":"demo__export"`) {
			t.Fatalf("tools/list lacks demo__export: %s", list)
		}
		id := h.Request("tools/call", map[string]any{
			"name":      "demo__export",
			"arguments": map[string]any{"seconds": 0.3, "steps": 5},
			"_meta":     map[string]any{"progressToken": "tok-1"},
		})
		res := h.Result(id, 30*time.Second)
		var got struct {
			Content []struct{ Text string } `json:"content"`
		}
		if err := json.Unmarshal(res, &got); err != nil || len(got.Content) == 0 || !strings.Contains(got.Content[0].Text, "exported") {
			t.Fatalf("result = %s", res)
		}
		var values []float64
		for _, r := range h.Received() {
			if r.Msg.Method == "notifications/progress" {
				var p struct {
					Token    json.RawMessage `json:"progressToken"`
					Progress float64         `json:"progress"`
				}
				json.Unmarshal(r.Msg.Params, &p)
				if string(p.Token) != `"tok-1"` {
					t.Errorf("progress token = %s, want \"tok-1\"", p.Token)
				}
				values = append(values, p.Progress)
			}
			if r.Msg.IsResponse() && r.Msg.ID == id {
				break
			}
		}
		if len(values) != 5 {
			t.Fatalf("progress before the result: %v, want 5 values", values)
		}
	})
}
