package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/sse"
)

// TestHTTPProgressBurst is the progress acceptance over HTTP: 10 concurrent
// calls of the demo's burst (200 back-to-back progress notifications
// each), as a legacy session host and as 2026-07-28 host. Each call's own
// response stream carries its 200 notifications, in order, under its
// token, then its result and nothing after: 2,000 in all.
func TestHTTPProgressBurst(t *testing.T) {
	const calls, count = 10, 200
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
				e := mcpxtest.NewEnv(t)
				cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
				m := harness.StartHTTP(t, e, mode, cfg, false)
				h := harness.NewRawHost(t, m)
				var hdr map[string]string
				meta := func(tok string) map[string]any { return map[string]any{"progressToken": tok} }
				if era == "2026-07-28" {
					hdr = harness.ModernHeaders("tools/call", "demo__burst")
					meta = func(tok string) map[string]any { return harness.ModernMeta(map[string]any{"progressToken": tok}) }
				} else {
					h.Initialize(era)
				}
				replies := make([]*harness.HttpReply, calls)
				var wg sync.WaitGroup
				start := time.Now()
				for i := range calls {
					wg.Go(func() {
						replies[i] = h.Do(harness.CallBody(i, "demo__burst", map[string]any{"count": count}, meta(fmt.Sprint("b-", i))), hdr)
					})
				}
				wg.Wait()
				elapsed := time.Since(start)
				total := 0
				for i, r := range replies {
					if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
						t.Fatalf("call %d: %d %s, want an SSE stream", i, r.Status, r.Header.Get("Content-Type"))
					}
					if r.Header.Get("X-Accel-Buffering") != "no" {
						t.Errorf("call %d: X-Accel-Buffering = %q, want no", i, r.Header.Get("X-Accel-Buffering"))
					}
					if len(r.Msgs) != count+1 {
						t.Fatalf("call %d: %d messages on its stream, want %d progress and the result", i, len(r.Msgs), count)
					}
					for j, msg := range r.Msgs[:count] {
						var p harness.ProgressNote
						if msg.Method != "notifications/progress" || json.Unmarshal(msg.Params, &p) != nil {
							t.Fatalf("call %d: message %d is %s %s, want progress", i, j, msg.Method, msg.Params)
						}
						if string(p.Token) != fmt.Sprintf(`"b-%d"`, i) || p.Progress != float64(j+1) {
							t.Fatalf("call %d: notification %d has token %s progress %v, want \"b-%d\" and %d (order)", i, j, p.Token, p.Progress, i, j+1)
						}
						total++
					}
					last := r.Msgs[count]
					if !last.IsResponse() || last.ID.String() != fmt.Sprint(i) || last.Error != nil {
						t.Fatalf("call %d: last message %s, want its result", i, r.Body)
					}
					if got := harness.ResultText(t, last.Result); got != fmt.Sprintf("sent %d", count) {
						t.Errorf("call %d: result %q", i, got)
					}
				}
				if total != calls*count {
					t.Errorf("%d progress notifications in all, want %d", total, calls*count)
				}
				t.Logf("%s %s: %d calls, %d progress notifications relayed in order, each call's before its result, in %v",
					era, mode, calls, total, elapsed.Round(time.Millisecond))
			})
		})
	}
}

// TestHTTPStreamCloseCancels: a 2026-07-28 host closing a request's
// response stream cancels it: the stdio upstream gets notifications/
// cancelled for mcpx's request, with a reason saying so. Over 50 closes it
// reports host close -> upstream cancellation latency (no time asserted).
func TestHTTPStreamCloseCancels(t *testing.T) {
	t.Parallel()
	const n = 50
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		m := harness.StartHTTP(t, e, mode, cfg, false)
		h := harness.NewRawHost(t, m)
		lat := make([]time.Duration, 0, n)
		for i := range n {
			marker := fmt.Sprint("close-", i)
			ctx, cancel := context.WithTimeout(context.Background(), harness.WaitLong)
			resp := h.Post(ctx, harness.CallBody(i, "demo__export", map[string]any{"seconds": 30},
				harness.ModernMeta(map[string]any{"progressToken": marker, harness.MarkerKey: marker})), harness.ModernHeaders("tools/call", "demo__export"))
			if resp.StatusCode != 200 {
				t.Fatalf("call %d: status %d", i, resp.StatusCode)
			}
			rd := sse.NewReader(resp.Body, 1<<20)
			if ev, err := rd.Next(); err != nil || !strings.Contains(string(ev.Data), "notifications/progress") {
				t.Fatalf("call %d: first event %v, %v; want progress", i, ev, err)
			}
			closed := time.Now()
			cancel() // aborts the request: its connection closes
			resp.Body.Close()
			up := harness.UpstreamRequest(e, "demo", marker)
			ev := harness.UpstreamCancel(e, "demo", up.ID)
			harness.CheckCancel(t, ev, "cancelled by the host: it closed the request's response stream")
			lat = append(lat, harness.EventAt(t, ev).Sub(closed))
			e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool {
				return ev.Event == demo.EventFinished && string(ev.ID) == string(up.ID) && ev.Outcome == demo.OutcomeCancelled
			})
		}
		if got := len(harness.Cancellations(e, "demo")); got != n {
			t.Errorf("the upstream got %d cancellations, want %d", got, n)
		}
		slices.Sort(lat)
		t.Logf("%s: 2026-07-28 host closes its stream -> upstream notifications/cancelled over %d closes: p50 %v, p99 %v (min %v, max %v)",
			mode, n, harness.Quantile(lat, 0.50), harness.Quantile(lat, 0.99), lat[0], lat[len(lat)-1])
	})
}

// TestHTTPLegacyDisconnect: a legacy host that drops the connection of its
// POST mid-call has not cancelled: the upstream call runs to its result
// (no cancellation reaches it), and mcpx logs the result it could not
// deliver, naming the call and its size but not its content. Then the
// session still serves.
func TestHTTPLegacyDisconnect(t *testing.T) {
	t.Parallel()
	for _, withProgress := range []bool{true, false} {
		t.Run(fmt.Sprint("progress=", withProgress), func(t *testing.T) {
			t.Parallel()
			mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
				e := mcpxtest.NewEnv(t)
				cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
				m := harness.StartHTTP(t, e, mode, cfg, false)
				h := harness.NewRawHost(t, m)
				h.Initialize("2025-11-25")
				marker := "legacy-drop"
				meta := map[string]any{harness.MarkerKey: marker}
				tool, args := "demo__sleep_then", any(map[string]any{"seconds": 1, "text": "finished anyway"})
				if withProgress {
					meta["progressToken"] = 5
					tool, args = "demo__export", map[string]any{"seconds": 1, "steps": 4}
				}
				ctx, cancel := context.WithTimeout(context.Background(), harness.WaitLong)
				posted := make(chan error, 1)
				go func() {
					// Without progress, the answer is one JSON body: the
					// POST waits for it until cancelled.
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, m.URL, strings.NewReader(harness.CallBody("drop-1", tool, args, meta)))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					req.Header.Set("Authorization", "Bearer "+m.Token)
					req.Header.Set("Mcp-Session-Id", h.Sid)
					resp, err := h.Hc.Do(req)
					if err == nil {
						defer resp.Body.Close()
						var ev *sse.Event
						if ev, err = sse.NewReader(resp.Body, 1<<20).Next(); err == nil && !strings.Contains(string(ev.Data), "notifications/progress") {
							err = fmt.Errorf("first event %s, want progress", ev.Data)
						}
						if err == nil {
							err = errProgressSeen
						}
					}
					posted <- err
				}()
				if withProgress {
					if err := <-posted; err != errProgressSeen {
						t.Fatalf("reading the call's stream: %v", err)
					}
				}
				up := harness.UpstreamRequest(e, "demo", marker)
				cancel() // closes the POST's connection
				if !withProgress {
					if err := <-posted; !errors.Is(err, context.Canceled) {
						t.Fatalf("the POST ended with %v, want context.Canceled (the host gave up before the result)", err)
					}
				}

				fin := e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool {
					return ev.Event == demo.EventFinished && string(ev.ID) == string(up.ID)
				})
				if fin.Outcome != demo.OutcomeResult {
					t.Errorf("the upstream call ended with %q, want %q: the host's disconnect is no cancel", fin.Outcome, demo.OutcomeResult)
				}
				// The host left without a cancel: the call went on as a job,
				// its result kept for the host's principal.
				line := m.WaitLog(t, harness.WaitLong, "the call goes on as a job", "tool="+strings.TrimPrefix(tool, "demo__"), "drop-1")
				t.Logf("%s: mcpx logged: %s", mode, strings.TrimSpace(line))
				want := "finished anyway"
				if withProgress {
					want = "exported 1000 records in 4 parts"
				}
				if j := harness.KeptJob(t, e, mode, line); j.Status != "completed" || !strings.Contains(string(j.Result), want) {
					t.Errorf("the job %s: %s %s, want completed with %q", j.ID, j.Status, j.Result, want)
				}
				if evs := harness.Cancellations(e, "demo"); len(evs) > 0 {
					t.Errorf("the upstream got cancellations:\n%s", harness.Describe(evs))
				}
				r := h.Do(harness.CallBody("after", "demo__echo", map[string]any{"k": 2}, nil), nil)
				if len(r.Msgs) != 1 || r.Msgs[0].Error != nil || harness.ResultText(t, r.Msgs[0].Result) != `{"k":2}` {
					t.Errorf("echo after the disconnect: %d %s", r.Status, r.Body)
				}
			})
		})
	}
}

var errProgressSeen = errors.New("progress seen")

// TestHTTPLegacyCancel: a legacy host's notifications/cancelled POST
// cancels its call in flight on another POST: the upstream gets the host's
// reason, and the call's stream ends without a response.
func TestHTTPLegacyCancel(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		m := harness.StartHTTP(t, e, mode, cfg, false)
		h := harness.NewRawHost(t, m)
		h.Initialize("2025-06-18")
		ctx, cancel := context.WithTimeout(context.Background(), harness.WaitLong)
		defer cancel()
		resp := h.Post(ctx, harness.CallBody(77, "demo__export", map[string]any{"seconds": 30}, map[string]any{"progressToken": "c77", harness.MarkerKey: "c77"}), nil)
		done := make(chan *harness.HttpReply, 1)
		go func() { done <- h.Read(resp) }()
		up := harness.UpstreamRequest(e, "demo", "c77")
		if r := h.Do(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77,"reason":"user pressed stop"}}`, map[string]string{"Mcp-Protocol-Version": "2025-06-18"}); r.Status != http.StatusAccepted {
			t.Fatalf("cancel POST: %d %s, want 202", r.Status, r.Body)
		}
		harness.CheckCancel(t, harness.UpstreamCancel(e, "demo", up.ID), "cancelled by the host: user pressed stop")
		select {
		case r := <-done:
			for _, msg := range r.Msgs {
				if msg.IsResponse() {
					t.Errorf("the cancelled call got a response: %s", r.Body)
				}
			}
		case <-time.After(harness.WaitLong):
			t.Fatal("the cancelled call's stream did not end")
		}
	})
}
