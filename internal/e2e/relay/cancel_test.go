package relay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestHostCancel: the host cancels a running call. The upstream (modern,
// then legacy) gets notifications/cancelled with mcpx's own upstream
// request id (not the host's 900 or 901) and a reason naming the host's;
// the host gets no response and no more progress.
func TestHostCancel(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}, mcpxtest.Demo{Name: "leg", Args: []string{"-era", "legacy"}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")

		for i, server := range []string{"demo", "leg"} {
			rawID := fmt.Sprint(900 + i)
			token := `"c-` + rawID + `"`
			marker := "cancel-" + rawID
			id := harness.SendCall(h, rawID, server+"__export", map[string]any{"seconds": 30},
				map[string]any{"progressToken": json.RawMessage(token), harness.MarkerKey: marker})
			h.WaitFor(harness.WaitLong, "first progress of call "+rawID, func(r mcpxtest.Received) bool {
				p, ok := harness.AsProgress(t, r)
				return ok && string(p.Token) == token
			})
			harness.Cancel(h, rawID, "test says stop")

			up := harness.UpstreamRequest(e, server, marker)
			if string(up.ID) == rawID {
				t.Fatalf("%s: mcpx sent the host's id %s upstream; it must mint its own", server, rawID)
			}
			ev := harness.UpstreamCancel(e, server, up.ID)
			harness.CheckCancel(t, ev, "cancelled by the host: test says stop")
			if ev.Method != "tools/call" || ev.Tool != "export" {
				t.Errorf("%s: upstream cancellation matched %s %s, want tools/call export", server, ev.Method, ev.Tool)
			}
			for _, c := range harness.Cancellations(e, server) {
				if string(c.RequestID) == rawID {
					t.Errorf("%s: upstream got a cancellation under the host's id: %+v", server, c)
				}
			}
			cancelledAt := harness.EventAt(t, ev)

			h.NoResponse(id, harness.Settle)
			for _, r := range harness.ProgressFor(t, h, token) {
				if r.At.After(cancelledAt) {
					t.Errorf("%s: progress reached the host after the upstream saw the cancellation: %s", server, r.Raw)
				}
			}
			e.WaitRecord(server, harness.WaitLong, func(ev demo.Event) bool {
				return ev.Event == demo.EventFinished && string(ev.ID) == string(up.ID) && ev.Outcome == demo.OutcomeCancelled
			})
			t.Logf("%s: host id %s -> upstream %s id %s, cancelled with %q", mode, rawID, server, up.ID, ev.Reason)

			// The connection still works.
			echo := h.Request("tools/call", map[string]any{"name": server + "__echo", "arguments": map[string]any{"k": 1}})
			if got := harness.ResultText(t, h.Result(echo, harness.WaitLong)); got != `{"k":1}` {
				t.Errorf("%s: echo after the cancel = %q", server, got)
			}
		}
	})
}

// TestCancelLatency measures host cancel to upstream notifications/cancelled
// (host send time to the demo's record time) over many cancels. It checks
// each cancel and reports p50/p99; it asserts no time bound.
func TestCancelLatency(t *testing.T) {
	const n = 50
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		lat := make([]time.Duration, 0, n)
		cancelled := map[string]bool{}
		for i := range n {
			// Integer, string and 20-digit ids, each matched exactly.
			rawID := [...]string{fmt.Sprint(9000 + i), fmt.Sprintf(`"c-%d"`, i), fmt.Sprintf("123456789012345678%02d", i)}[i%3]
			token := fmt.Sprintf(`"lat-%d"`, i)
			marker := fmt.Sprint("lat-", i)
			id := harness.SendCall(h, rawID, "demo__export", map[string]any{"seconds": 30},
				map[string]any{"progressToken": json.RawMessage(token), harness.MarkerKey: marker})
			cancelled[id.String()] = true
			h.WaitFor(harness.WaitLong, "first progress of call "+rawID, func(r mcpxtest.Received) bool {
				p, ok := harness.AsProgress(t, r)
				return ok && string(p.Token) == token
			})
			sent := time.Now()
			harness.Cancel(h, rawID, "latency")
			up := harness.UpstreamRequest(e, "demo", marker)
			ev := harness.UpstreamCancel(e, "demo", up.ID)
			harness.CheckCancel(t, ev, "cancelled by the host: latency")
			lat = append(lat, harness.EventAt(t, ev).Sub(sent))
			if i == n-1 {
				h.NoResponse(id, harness.Settle)
			}
		}
		for _, r := range h.Received() {
			if r.Msg.IsResponse() && cancelled[r.Msg.ID.String()] {
				t.Errorf("a cancelled call got a response: %s", r.Raw)
			}
		}
		slices.Sort(lat)
		t.Logf("%s: host cancel -> upstream notifications/cancelled over %d cancels: p50 %v, p99 %v (min %v, max %v)",
			mode, n, harness.Quantile(lat, 0.50), harness.Quantile(lat, 0.99), lat[0], lat[len(lat)-1])
	})
}

// TestCancelUnknownOrFinished: a cancel for an id that is not in flight
// (never used, or already answered) is ignored: no reply, nothing upstream,
// and the connection stays usable.
func TestCancelUnknownOrFinished(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")

		done := harness.SendCall(h, "700", "demo__echo", map[string]any{"a": 1}, nil)
		h.Result(done, harness.WaitLong)
		before := len(h.Received())
		harness.Cancel(h, "700", "too late")     // finished
		harness.Cancel(h, "4242", "never sent")  // unknown number
		harness.Cancel(h, `"700"`, "wrong type") // unknown: "700" is not 700
		h.Notify("notifications/cancelled", map[string]any{"reason": "no id"})

		next := h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"b": 2}})
		if got := harness.ResultText(t, h.Result(next, harness.WaitLong)); got != `{"b":2}` {
			t.Errorf("echo after the stray cancels = %q", got)
		}
		time.Sleep(harness.Settle) // time: a reply to a cancel must not come
		for _, r := range h.Received()[before:] {
			if r.Msg.IsResponse() && r.Msg.ID != next {
				t.Errorf("a cancel notification got a reply: %s", r.Raw)
			}
		}
		if evs := harness.Cancellations(e, "demo"); len(evs) > 0 {
			t.Errorf("stray host cancels reached the upstream:\n%s", harness.Describe(evs))
		}
	})
}

// TestCancelStubborn: the stubborn tool ignores the cancel and keeps
// sending progress, then its result; neither reaches the host.
func TestCancelStubborn(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")

		id := harness.SendCall(h, "901", "demo__stubborn", map[string]any{"seconds": 0.8, "steps": 4},
			map[string]any{"progressToken": 901, harness.MarkerKey: "stubborn"})
		h.WaitFor(harness.WaitLong, "first progress of the stubborn call", func(r mcpxtest.Received) bool {
			p, ok := harness.AsProgress(t, r)
			return ok && string(p.Token) == "901"
		})
		harness.Cancel(h, "901", "stop being stubborn")
		up := harness.UpstreamRequest(e, "demo", "stubborn")
		ev := harness.UpstreamCancel(e, "demo", up.ID)
		harness.CheckCancel(t, ev, "cancelled by the host: stop being stubborn")
		cancelledAt := harness.EventAt(t, ev)

		// The upstream finishes anyway, with its result.
		e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool {
			return ev.Event == demo.EventFinished && string(ev.ID) == string(up.ID) && ev.Outcome == demo.OutcomeResult
		})
		h.NoResponse(id, harness.Settle)
		got := harness.ProgressFor(t, h, "901")
		for _, r := range got {
			if r.At.After(cancelledAt) {
				t.Errorf("late progress of the cancelled stubborn call reached the host: %s", r.Raw)
			}
		}
		// The demo's wire shows the late progress mcpx dropped.
		sent := upstreamProgressSent(t, e, "demo", up.ProgressToken)
		if sent != 4 {
			t.Errorf("the stubborn tool sent %d progress notifications, want 4", sent)
		}
		t.Logf("%s: stubborn sent %d progress notifications and its result; the host received %d progress and no result", mode, sent, len(got))

		if got := harness.ResultText(t, h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{}}), harness.WaitLong)); got != `{}` {
			t.Errorf("echo after the stubborn call = %q", got)
		}
	})
}

// upstreamProgressSent counts the progress notifications the demo wrote
// under its token, from its wire log.
func upstreamProgressSent(t testing.TB, e *mcpxtest.Env, server string, token json.RawMessage) int {
	t.Helper()
	n := 0
	for _, line := range wireLines(t, e, server, "> ") {
		var m struct {
			Method string               `json:"method"`
			Params harness.ProgressNote `json:"params"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Method == "notifications/progress" && string(m.Params.Token) == string(token) {
			n++
		}
	}
	return n
}

// TestHostDisconnect: the host leaves with a call in flight; the upstream
// is told "the host disconnected".
func TestHostDisconnect(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		harness.SendCall(h, "902", "demo__wait", map[string]any{"seconds": 30}, map[string]any{harness.MarkerKey: "left"})
		up := harness.UpstreamRequest(e, "demo", "left")
		h.Close()
		ev := harness.UpstreamCancel(e, "demo", up.ID)
		harness.CheckCancel(t, ev, "the host disconnected")
	})
}

// TestCancelSilencesAtOnce: once mcpx has read a host's cancel, nothing
// more of that request reaches the host (2026-07-28 stdio: after a cancel
// the server "MUST NOT send any further messages for it"), even while the
// upstream is still flooding progress. The host sends its cancel and then
// server/discover, which mcpx answers at once: nothing of the cancelled
// call may follow that answer. Several rounds, since the window is short.
func TestCancelSilencesAtOnce(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		h := e.StartHost(mode, cfg)
		late := 0
		for i := range 8 {
			n, _ := cancelRound(t, e, h, 970+i, 1000000, 100)
			late += n
		}
		t.Logf("%s: 8 rounds, %d messages of cancelled calls after the cancel was processed", mode, late)
	})
}

// TestCancelRacingResult: the host cancels a call whose result is on its
// way. The result may reach the host only if mcpx sent it before it read
// the cancel, never after (checked with the server/discover fence).
func TestCancelRacingResult(t *testing.T) {
	t.Parallel()
	const rounds = 30
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		h := e.StartHost(mode, cfg)
		late, answered := 0, 0
		for i := range rounds {
			n, a := cancelRound(t, e, h, 1100+i, 20+5*i, 10)
			late += n
			if a {
				answered++
			}
		}
		t.Logf("%s: %d rounds: %d results beat the cancel, %d messages after the cancel was processed", mode, rounds, answered, late)
	})
}

// cancelRound runs one call of burst {count} as a 2026-07-28 host, with id
// rawID, cancels it once progress reaches at, then fences with
// server/discover. It fails the test for anything of the call received
// after the fence's answer, and returns how many such messages there were
// and whether the call's result came (before the fence).
func cancelRound(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host, id, count, at int) (late int, answered bool) {
	t.Helper()
	rawID := fmt.Sprint(id)
	token := fmt.Sprintf(`"flood-%d"`, id)
	marker := "flood-" + rawID
	cid := harness.SendCall(h, rawID, "demo__burst", map[string]any{"count": count},
		mcpxtest.ModernMeta(map[string]any{"progressToken": json.RawMessage(token), harness.MarkerKey: marker}))
	// Matched on raw bytes: the host may receive many thousands of messages.
	h.WaitFor(harness.WaitLong, "progress of call "+rawID, func(r mcpxtest.Received) bool {
		return bytes.Contains(r.Raw, fmt.Appendf(nil, `"progressToken":%s,"progress":%d,`, token, at))
	})
	harness.Cancel(h, rawID, "flood")
	fence := h.Request("server/discover", map[string]any{"_meta": mcpxtest.ModernMeta(nil)})
	h.Result(fence, harness.WaitLong)
	up := harness.UpstreamRequest(e, "demo", marker)
	e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool {
		return ev.Event == demo.EventFinished && string(ev.ID) == string(up.ID)
	})
	time.Sleep(50 * time.Millisecond) // time: what the upstream sent last must not reach the host
	all := h.Received()
	f := harness.ResponseIndex(all, fence)
	answered = harness.ResponseIndex(all, cid) >= 0
	progress := 0
	for _, r := range all[f:] {
		if r.Msg.IsResponse() && r.Msg.ID == cid {
			t.Errorf("call %s: its response came after mcpx answered a request sent after the cancel: %s", rawID, r.Raw)
			late++
		}
		if p, ok := harness.AsProgress(t, r); ok && string(p.Token) == token {
			progress++
		}
	}
	if progress > 0 {
		t.Errorf("call %s: %d progress notifications of the cancelled call came after mcpx answered a request sent after the cancel", rawID, progress)
	}
	return late + progress, answered
}

// TestCancelThenReuseID: a 2026-07-28 host may use an id again as soon as
// it has cancelled the request that had it (ids need only be unique among
// outstanding requests); the new request is served, and answered once.
func TestCancelThenReuseID(t *testing.T) {
	const rounds = 10
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		h := e.StartHost(mode, cfg)
		for i := range rounds {
			rawID := fmt.Sprint(800 + i)
			marker := "reuse-" + rawID
			harness.SendCall(h, rawID, "demo__wait", map[string]any{"seconds": 30}, mcpxtest.ModernMeta(map[string]any{harness.MarkerKey: marker}))
			up := harness.UpstreamRequest(e, "demo", marker)
			harness.Cancel(h, rawID, "reusing the id")
			id := harness.SendCall(h, rawID, "demo__echo", map[string]any{"round": i}, mcpxtest.ModernMeta(nil))
			m := h.Response(id, harness.WaitLong)
			if m.Error != nil {
				t.Errorf("round %d: the request reusing id %s failed: %d %s", i, rawID, m.Error.Code, m.Error.Message)
			} else if got, want := harness.ResultText(t, m.Result), fmt.Sprintf(`{"round":%d}`, i); got != want {
				t.Errorf("round %d: id %s answered with %q, want the echo %q", i, rawID, got, want)
			}
			harness.CheckCancel(t, harness.UpstreamCancel(e, "demo", up.ID), "cancelled by the host: reusing the id")
		}
		time.Sleep(harness.Settle) // time: a second answer to an id must not come
		counts := map[string]int{}
		for _, r := range h.Received() {
			if r.Msg.IsResponse() {
				counts[r.Msg.ID.String()]++
			}
		}
		for id, n := range counts {
			if n != 1 {
				t.Errorf("id %s answered %d times, want once", id, n)
			}
		}
	})
}
