package relay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestCallIDFollowsCall: at debug level the daemon's JSON log has one call
// id on the host side's lines (the tool call from the host, the answer)
// and the upstream side's (sent upstream, with the upstream's request id,
// and its end); the call's result never appears in the log.
func TestCallIDFollowsCall(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	logPath := e.Path("daemon-debug.log")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := e.Command(ctx, "daemon", "--config", cfg, "--log-level", "debug", "--log", logPath)
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { e.Run(harness.WaitLong, "stop", "--config", cfg); _ = d.Wait() }()
	deadline := time.Now().Add(harness.WaitLong)
	for {
		if _, _, code := e.Run(harness.WaitLong, "status", "--config", cfg); code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon did not answer")
		}
		time.Sleep(20 * time.Millisecond)
	}
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	const secret = "result-content-must-not-be-logged"
	id := h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"s": secret}})
	h.Result(id, harness.WaitLong)

	type line struct {
		Msg        string `json:"msg"`
		CallID     uint64 `json:"callId"`
		UpstreamID int64  `json:"upstreamId"`
		Outcome    string `json:"outcome"`
	}
	want := []string{"tool call from host", "call sent upstream", "call ended", "answering host"}
	var got map[string]line
	for deadline := time.Now().Add(harness.WaitLong); ; {
		b, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		got = map[string]line{}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			var l line
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.CallID != 0 {
				got[l.Msg] = l
			}
		}
		if len(got) >= len(want) || time.Now().After(deadline) {
			if strings.Contains(string(b), secret) {
				t.Errorf("the daemon's log holds the call's result:\n%s", b)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	first := got[want[0]].CallID
	for _, msg := range want {
		l, ok := got[msg]
		switch {
		case !ok:
			t.Errorf("no %q line with a call id; have %+v", msg, got)
		case l.CallID != first:
			t.Errorf("%q has call id %d, %q has %d", msg, l.CallID, want[0], first)
		}
	}
	if got["call sent upstream"].UpstreamID == 0 || got["call ended"].Outcome != "ok" {
		t.Errorf("upstream side lines lack the upstream id or outcome: %+v", got)
	}
	t.Logf("call id %d on %d lines, host side and upstream side", first, len(want))
}
