package relay

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// The limits: an upstream's call slots and queue (-31004, upstream_busy)
// and a host connection's requests in flight (-31005, host_limit).

const (
	codeBusy      = -31004
	codeHostLimit = -31005
)

// limitError waits for the response to id, which must be an mcpx error
// with code, and returns its data.mcpx members.
func limitError(t *testing.T, h *mcpxtest.Host, id jsonrpc.ID, code int64) (string, map[string]any) {
	t.Helper()
	m := h.Response(id, harness.WaitLong)
	if m.Error == nil || m.Error.Code != code {
		t.Fatalf("response to %s = %s, want error %d", id, m.Encode(), code)
	}
	var data struct {
		Mcpx map[string]any `json:"mcpx"`
	}
	if err := json.Unmarshal(m.Error.Data, &data); err != nil {
		t.Fatalf("error data %s: %v", m.Error.Data, err)
	}
	return m.Error.Message, data.Mcpx
}

// holdCall starts a call of server's wait tool that runs until cancelled
// (30s) and returns once the upstream has it.
func holdCall(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host, server, rawID string) {
	t.Helper()
	marker := "hold-" + server + "-" + rawID
	harness.SendCall(h, rawID, server+"__wait", map[string]any{"seconds": 30}, map[string]any{harness.MarkerKey: marker})
	harness.UpstreamRequest(e, server, marker)
}

// waitQueued waits until n calls wait in server's queue, as the
// gateway's status shows them: the daemon's, or the in-process one's.
func waitQueued(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host, cfg, server string, n int) {
	t.Helper()
	harness.WaitUntil(t, harness.WaitLong, fmt.Sprintf("status showing %d queued call(s) of %s", n, server), func() bool {
		st, ok := h.Status()
		if !ok {
			st = harness.StatusJSON(t, e, cfg)
		}
		return harness.UpstreamOf(st, server).Queued == n
	})
}

// echoCall calls server's echo tool and returns the response.
func echoCall(h *mcpxtest.Host, server string, n int) *jsonrpc.Message {
	return h.Response(h.Request("tools/call", map[string]any{"name": server + "__echo", "arguments": map[string]any{"n": n}}), harness.WaitLong)
}

// TestUpstreamBusyQueueFull: with both call slots of an upstream taken and
// its one queue place filled, the next call fails at once with -31004
// naming the server and its limits, and never reaches the upstream; the
// queued call goes upstream as soon as a slot comes free. In daemon mode,
// `mcpx status` shows the queued call.
func TestUpstreamBusyQueueFull(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo", Fields: map[string]any{
			"maxConcurrentCalls": 2, "queueLength": 1, "queueTimeout": "30s"}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		holdCall(t, e, h, "demo", "9001")
		holdCall(t, e, h, "demo", "9002")
		queued := harness.SendCall(h, "9003", "demo__echo", map[string]any{"q": 1}, map[string]any{harness.MarkerKey: "queued"})
		waitQueued(t, e, h, cfg, "demo", 1)
		if mode == mcpxtest.Daemon {
			out, _, _ := e.Run(harness.WaitLong, "status", "--config", cfg)
			if !strings.Contains(out, "demo: 1 more call(s) queued for a call slot (maxConcurrentCalls)") {
				t.Errorf("mcpx status does not show the queued call:\n%s", out)
			}
		}

		start := time.Now()
		refused := harness.SendCall(h, "9004", "demo__echo", map[string]any{"q": 2}, map[string]any{harness.MarkerKey: "refused"})
		msg, data := limitError(t, h, refused, codeBusy)
		t.Logf("%s: refused %v after sending: %s", mode, time.Since(start).Round(time.Microsecond), msg)
		if data["kind"] != "upstream_busy" || data["server"] != "demo" || data["reason"] != "queue_full" ||
			data["limit"] != 2.0 || data["queueLength"] != 1.0 {
			t.Errorf("error data = %v, want upstream_busy, demo, queue_full, limit 2, queueLength 1", data)
		}
		if !strings.Contains(msg, `upstream "demo" is busy`) || !strings.Contains(msg, "all 2 of its call slots") || !strings.Contains(msg, "queue of 1") {
			t.Errorf("message %q does not name the server, its limit and its queue", msg)
		}
		if _, ok := recordedRequest(e, "demo", "queued"); ok {
			t.Error("the queued call reached the upstream while both slots were taken")
		}

		harness.Cancel(h, "9001", "make room")
		harness.UpstreamRequest(e, "demo", "queued") // admitted once a slot came free
		if got := harness.ResultText(t, h.Result(queued, harness.WaitLong)); got != `{"q":1}` {
			t.Errorf("queued call result %q", got)
		}
		if _, ok := recordedRequest(e, "demo", "refused"); ok {
			t.Error("the refused call reached the upstream")
		}
		if mode == mcpxtest.Daemon {
			if u := harness.UpstreamOf(harness.StatusJSON(t, e, cfg), "demo"); u.Queued != 0 {
				t.Errorf("status shows %d queued after the queue drained", u.Queued)
			}
		}
	})
}

// TestUpstreamBusyQueueTimeout: a queued call that waits the queue timeout
// without a slot coming free fails with -31004 (reason queue_timeout),
// not before the timeout (only that bound is asserted), and never reaches
// the upstream.
func TestUpstreamBusyQueueTimeout(t *testing.T) {
	const timeout = 400 * time.Millisecond
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo", Fields: map[string]any{
			"maxConcurrentCalls": 1, "queueLength": 4, "queueTimeout": "400ms"}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		holdCall(t, e, h, "demo", "9001")
		start := time.Now()
		waiting := harness.SendCall(h, "9002", "demo__echo", map[string]any{}, map[string]any{harness.MarkerKey: "waited"})
		msg, data := limitError(t, h, waiting, codeBusy)
		took := time.Since(start)
		if took < timeout {
			t.Errorf("the busy error came %v after the call, before the %v queue timeout", took, timeout)
		}
		if w, _ := data["waitedMs"].(float64); data["reason"] != "queue_timeout" || w < float64(timeout.Milliseconds()) || data["limit"] != 1.0 {
			t.Errorf("error data = %v, want queue_timeout, waitedMs >= %d, limit 1", data, timeout.Milliseconds())
		}
		if !strings.Contains(msg, "in its queue (queueTimeout)") {
			t.Errorf("message %q does not say the queue timeout ran out", msg)
		}
		t.Logf("%s: busy after %v: %s", mode, took.Round(time.Millisecond), msg)
		if _, ok := recordedRequest(e, "demo", "waited"); ok {
			t.Error("the timed-out call reached the upstream")
		}
	})
}

// TestCancelWhileQueued: a host that cancels a queued call gets no
// response, and nothing of it reaches the upstream (the demo records no
// request and no cancellation for it); its place is freed, so the calls
// after it run.
func TestCancelWhileQueued(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo", Fields: map[string]any{
			"maxConcurrentCalls": 1, "queueLength": 1, "queueTimeout": "30s"}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		holdCall(t, e, h, "demo", "9001")
		queued := harness.SendCall(h, "9002", "demo__export", map[string]any{"seconds": 1}, map[string]any{harness.MarkerKey: "queued", "progressToken": "q"})
		waitQueued(t, e, h, cfg, "demo", 1)
		harness.Cancel(h, "9002", "not any more")
		// Its queue place is free: another call queues (it would be
		// refused with a full queue of 1 otherwise) and runs once the
		// held call ends.
		next := harness.SendCall(h, "9003", "demo__echo", map[string]any{"after": 1}, map[string]any{harness.MarkerKey: "next"})
		waitQueued(t, e, h, cfg, "demo", 1)
		harness.Cancel(h, "9001", "make room")
		if got := harness.ResultText(t, h.Result(next, harness.WaitLong)); got != `{"after":1}` {
			t.Errorf("the call after the cancelled one: %q", got)
		}
		h.NoResponse(queued, harness.Settle)
		if progress := harness.ProgressFor(t, h, `"q"`); len(progress) > 0 {
			t.Errorf("the cancelled queued call got progress: %s", progress[0].Raw)
		}
		if ev, ok := recordedRequest(e, "demo", "queued"); ok {
			t.Errorf("the call cancelled while queued reached the upstream: %+v", ev)
		}
		up := harness.UpstreamRequest(e, "demo", "hold-demo-9001")
		for _, c := range harness.Cancellations(e, "demo") {
			if string(c.RequestID) != string(up.ID) {
				t.Errorf("the upstream got a cancellation other than the held call's: %+v", c)
			}
		}
	})
}

// TestHostInFlightLimit: one host connection may have at most
// mcpx.maxCallsPerHost requests in flight; the next is refused at once
// with -31005 naming the limit, and never reaches an upstream. Another
// connection is not affected, and once a request ends the host may send
// another.
func TestHostInFlightLimit(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"maxCallsPerHost": 3}, mcpxtest.Demo{Name: "demo"})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		for i := 1; i <= 2; i++ {
			holdCall(t, e, h, "demo", fmt.Sprint(9000+i))
		}
		// At the limit with each call, each sent as soon as the one before
		// is answered: an answered call no longer counts, so none is
		// refused.
		for i := range 20 {
			if m := echoCall(h, "demo", i); m.Error != nil {
				t.Fatalf("call %d, sent once the one before was answered: %s", i, m.Encode())
			}
		}
		holdCall(t, e, h, "demo", "9003")
		start := time.Now()
		over := harness.SendCall(h, "9004", "demo__echo", map[string]any{}, map[string]any{harness.MarkerKey: "over"})
		msg, data := limitError(t, h, over, codeHostLimit)
		t.Logf("%s: refused %v after sending: %s", mode, time.Since(start).Round(time.Microsecond), msg)
		if data["kind"] != "host_limit" || data["limit"] != 3.0 {
			t.Errorf("error data = %v, want host_limit, limit 3", data)
		}
		if !strings.Contains(msg, "already has 3") || !strings.Contains(msg, "mcpx.maxCallsPerHost") {
			t.Errorf("message %q does not name the limit", msg)
		}
		list := h.Request("tools/list", map[string]any{}) // every request that may wait counts
		if m := h.Response(list, harness.WaitLong); m.Error == nil || m.Error.Code != codeHostLimit {
			t.Errorf("tools/list at the limit = %s, want -31005", m.Encode())
		}
		h.Result(h.Request("ping", nil), harness.WaitLong) // answered at once: not limited

		other := e.StartHost(mode, cfg)
		other.Initialize("2025-11-25")
		if m := echoCall(other, "demo", 1); m.Error != nil {
			t.Errorf("another connection: %s", m.Encode())
		}

		harness.Cancel(h, "9001", "make room")
		deadline := time.Now().Add(harness.WaitLong) // the cancelled call counts until it has wound down
		for i := 0; ; i++ {
			m := echoCall(h, "demo", 100+i)
			if m.Error == nil {
				break
			}
			if m.Error.Code != codeHostLimit || time.Now().After(deadline) {
				t.Fatalf("a call after one ended: %s", m.Encode())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if _, ok := recordedRequest(e, "demo", "over"); ok {
			t.Error("the refused call reached the upstream")
		}
	})
}

// TestLimitsReload: a reload that changes only call limits applies them
// to new calls at once, without restarting the upstream or disturbing its
// call in flight. In-process, the edit is picked up by the file watcher;
// in daemon mode by `mcpx reload`, which reports the server unchanged.
func TestLimitsReload(t *testing.T) {
	t.Parallel()
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		write := func(slots, perHost int) string {
			return e.WriteConfig(map[string]any{"maxCallsPerHost": perHost},
				mcpxtest.Demo{Name: "demo", Args: []string{"-era", "legacy"}, // initialize is recorded
					Fields: map[string]any{"maxConcurrentCalls": slots, "queueLength": 0}},
				mcpxtest.Demo{Name: "other"})
		}
		cfg := write(1, 2)
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		long := harness.SendCall(h, "9001", "demo__export", map[string]any{"seconds": 5, "steps": 10}, map[string]any{harness.MarkerKey: "long"})
		harness.UpstreamRequest(e, "demo", "long")
		if m := echoCall(h, "demo", 1); m.Error == nil || m.Error.Code != codeBusy {
			t.Fatalf("second demo call under a limit of 1 = %s, want -31004", m.Encode())
		}
		holdCall(t, e, h, "other", "9002")
		if m := echoCall(h, "other", 2); m.Error == nil || m.Error.Code != codeHostLimit {
			t.Fatalf("third request under a host limit of 2 = %s, want -31005", m.Encode())
		}

		time.Sleep(20 * time.Millisecond) // a distinct modification time
		write(2, 4)
		if mode == mcpxtest.Daemon {
			out, errb, code := e.Run(harness.WaitLong, "reload", "--config", cfg)
			if code != 0 || !strings.Contains(out, "unchanged demo") {
				t.Fatalf("reload: exit %d, %q %q; want demo unchanged", code, out, errb)
			}
		}
		deadline := time.Now().Add(harness.WaitLong)
		for i := 0; ; i++ { // the new limits: a second demo call runs
			m := echoCall(h, "demo", 10+i)
			if m.Error == nil {
				break
			}
			if m.Error.Code != codeBusy && m.Error.Code != codeHostLimit || time.Now().After(deadline) {
				t.Fatalf("demo call after the reload: %s", m.Encode())
			}
			time.Sleep(50 * time.Millisecond)
		}
		holdCall(t, e, h, "demo", "9003")
		if m := echoCall(h, "demo", 3); m.Error == nil || m.Error.Code != codeBusy || !strings.Contains(m.Error.Message, "all 2 of its call slots") {
			t.Errorf("third demo call under the new limit of 2 = %s, want -31004 naming 2", m.Encode())
		}
		holdCall(t, e, h, "other", "9004") // 4 in flight: long, 2, 3, 4
		if m := echoCall(h, "other", 4); m.Error == nil || m.Error.Code != codeHostLimit || !strings.Contains(m.Error.Message, "already has 4") {
			t.Errorf("fifth request under the new host limit of 4 = %s, want -31005 naming 4", m.Encode())
		}

		if res := h.Result(long, harness.WaitLong); !strings.Contains(string(res), "exported") {
			t.Errorf("the call in flight across the reload: %s", res)
		}
		inits := 0
		for _, ev := range e.Records("demo") {
			if ev.Event == demo.EventInitialize {
				inits++
			}
			if ev.Event == demo.EventCancelled {
				t.Errorf("the reload disturbed a call: %+v", ev)
			}
		}
		if inits != 1 {
			t.Errorf("demo was initialized %d times, want once: a limits-only reload must not restart it", inits)
		}
	})
}
