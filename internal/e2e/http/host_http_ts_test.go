package http

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// httpHostReport is what test/interop/httphost.mjs prints.
type httpHostReport struct {
	SDK       string   `json:"sdk"`
	OK        bool     `json:"ok"`
	Error     string   `json:"error"`
	SessionID *string  `json:"sessionId"`
	Tools     []string `json:"tools"`
	Long      struct {
		Text     string    `json:"text"`
		IsError  bool      `json:"isError"`
		Progress []float64 `json:"progress"`
	} `json:"long"`
	Abort struct {
		Resolved bool      `json:"resolved"`
		Error    string    `json:"error"`
		Progress []float64 `json:"progress"`
	} `json:"abort"`
	SentCancels []struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	} `json:"sentCancels"`
	SentMethods []string `json:"sentMethods"`
	CloseError  string   `json:"closeError"`
}

// TestTSHTTPHost runs the TypeScript SDK as an HTTP host of mcpx: v1
// (@modelcontextprotocol/sdk, a legacy session) and v2
// (@modelcontextprotocol/client pinned to 2026-07-28, stateless). Each
// lists the tools, calls the demo's export with progress, and aborts a
// second call on its first progress. The upstream sees the abort: v1 sends
// notifications/cancelled (a legacy host's explicit cancel, with its
// reason); v2 only closes the request's stream, which mcpx turns into the
// upstream's cancellation.
func TestTSHTTPHost(t *testing.T) {
	t.Parallel()
	node, interop := mcpxtest.Node(t)
	mcpxtest.NodeModule(t, "@modelcontextprotocol/client", "package.json")
	const abortReason = "the host gave up after the first progress"
	for _, sdk := range []string{"v1", "v2"} {
		t.Run(sdk, func(t *testing.T) {
			t.Parallel()
			mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
				e := mcpxtest.NewEnv(t)
				cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
				m := harness.StartHTTP(t, e, mode, cfg, false)
				spec, _ := json.Marshal(map[string]any{
					"sdk": sdk, "url": m.URL, "token": m.Token, "tool": "demo__export", "steps": 5,
					"abortReason": abortReason, "deadlineMs": 60000,
				})
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, node, filepath.Join(interop, "httphost.mjs"), string(spec))
				cmd.Dir = interop
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("httphost.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
				}
				var r httpHostReport
				if err := json.Unmarshal(out, &r); err != nil {
					t.Fatalf("report %q: %v", out, err)
				}
				if !r.OK {
					t.Fatalf("httphost.mjs failed: %s\nstderr: %s", r.Error, stderr.String())
				}
				if (sdk == "v1") != (r.SessionID != nil && *r.SessionID != "") {
					t.Errorf("session id %v: want one for v1 (legacy) only", r.SessionID)
				}
				if !slices.Contains(r.Tools, "demo__export") {
					t.Errorf("tools/list lacks demo__export: %v", r.Tools)
				}
				if r.Long.IsError || r.Long.Text != "exported 1000 records in 5 parts" {
					t.Errorf("long call: %+v", r.Long)
				}
				// SDK v1 may report a progress that came with the result
				// as unknown (test/interop docs): at least one, in order.
				if len(r.Long.Progress) == 0 || len(r.Long.Progress) > 5 || !slices.IsSorted(r.Long.Progress) {
					t.Errorf("long call progress %v, want 1 to 5 increasing values", r.Long.Progress)
				}
				if r.Abort.Resolved || len(r.Abort.Progress) == 0 {
					t.Errorf("aborted call: %+v, want a rejection after its first progress", r.Abort)
				}
				want := "cancelled by the host: it closed the request's response stream"
				if sdk == "v1" {
					want = "cancelled by the host: " + abortReason
					if len(r.SentCancels) != 1 || r.SentCancels[0].Reason != abortReason {
						t.Errorf("v1 sent cancellations %+v, want one with its reason", r.SentCancels)
					}
				} else if len(r.SentCancels) != 0 {
					t.Errorf("v2 (2026-07-28) sent notifications/cancelled %+v; it cancels by closing the stream", r.SentCancels)
				}
				ev := e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool {
					return ev.Event == demo.EventCancelled && ev.Tool == "export"
				})
				harness.CheckCancel(t, ev, want)
				e.WaitRecord("demo", harness.WaitLong, func(fin demo.Event) bool {
					return fin.Event == demo.EventFinished && string(fin.ID) == string(ev.RequestID) && fin.Outcome == demo.OutcomeCancelled
				})
				t.Logf("%s %s: %d tools, long call progress %v, abort -> upstream cancelled with %q", sdk, mode, len(r.Tools), r.Long.Progress, ev.Reason)
			})
		})
	}
}
