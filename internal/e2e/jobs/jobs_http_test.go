package jobs

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestJobHTTPHostLeft: a legacy HTTP host that leaves mid-call without a
// cancel (as some hosts do on their own timeout) leaves a job; its retry
// of the same call attaches to that job and gets the result, and the
// upstream ran the tool once.
func TestJobHTTPHostLeft(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		m := harness.StartHTTP(t, e, mode, e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}), false)
		h := harness.NewRawHost(t, m)
		h.Initialize("2025-11-25")
		body := harness.CallBody(1, "demo__sleep_then", map[string]any{"seconds": 2, "text": "kept for you"}, nil)

		ctx, leave := context.WithCancel(context.Background())
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+m.Token)
		req.Header.Set("Mcp-Session-Id", h.Sid)
		sent := make(chan error, 1)
		go func() {
			resp, err := h.Hc.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			sent <- err
		}()
		e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool { return ev.Event == "request" && ev.Tool == "sleep_then" })
		leave()
		<-sent
		m.WaitLog(t, harness.WaitLong, "the host left mid-call: the call goes on as a job")

		r := h.Do(harness.CallBody(2, "demo__sleep_then", map[string]any{"text": "kept for you", "seconds": 2}, nil), nil)
		if len(r.Msgs) != 1 || r.Msgs[0].Error != nil || harness.FirstText(t, r.Msgs[0].Result) != "kept for you" {
			t.Fatalf("the retry: %s", r.Body)
		}
		if n := harness.Executions(e, "demo", "sleep_then"); n != 1 {
			t.Fatalf("the upstream ran the tool %d times, want 1", n)
		}
	})
}
