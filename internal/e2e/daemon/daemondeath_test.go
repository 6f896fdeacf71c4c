package daemon

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestDaemonDiesUnderServe: when the daemon behind `mcpx serve` is killed
// mid-call, the host's pending request is answered at once with an error
// (not left hanging), and the host's next request reconnects — a new
// daemon, the host's initialize replayed unseen — and works. Both ways
// serve connects a host to the daemon.
func TestDaemonDiesUnderServe(t *testing.T) {
	t.Parallel()
	for _, way := range harness.HandoffWays {
		t.Run(way, func(t *testing.T) { testDaemonDiesUnderServe(t, way) })
	}
}

func testDaemonDiesUnderServe(t *testing.T, way string) {
	e := mcpxtest.NewEnv(t)
	harness.SetHandoff(e, way)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	id := h.Request("tools/call", map[string]any{"name": "demo__export", "arguments": map[string]any{"seconds": 30},
		"_meta": map[string]any{"progressToken": "p"}})
	h.WaitFor(harness.WaitLong, "first progress", func(r mcpxtest.Received) bool { return r.Msg.Method == "notifications/progress" })
	pid := harness.DaemonPID(t, e)
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	m := h.Response(id, harness.WaitLong)
	t.Logf("the host's pending call was answered %s after the daemon was killed", time.Since(killed))
	if m.Error == nil || m.Error.Code != -31000 || !strings.Contains(m.Error.Message, "daemon") {
		t.Fatalf("pending call: got %s, want -31000 naming the daemon", m.Encode())
	}
	res := h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"after": "reconnect"}}), harness.WaitLong)
	if !strings.Contains(string(res), `"after":"reconnect"`) {
		t.Fatalf("call after reconnecting: %s", res)
	}
	if newPID := harness.DaemonPID(t, e); newPID == pid {
		t.Fatalf("still the killed daemon's pid %d", pid)
	}
	for _, r := range h.Received() {
		if strings.Contains(string(r.Raw), "mcpx-replayed-initialize") {
			t.Errorf("the host saw the replayed initialize's answer: %s", r.Raw)
		}
	}
}
