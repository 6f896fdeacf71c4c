package relay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestMalformedFlood: an upstream writes 100,000 lines that are not JSON
// to its stdout during a call. The call is answered; the daemon's log gets
// a few of the lines and counts the rest (all 100,000 accounted for once
// the upstream's connection ends), and still holds its own start.
func TestMalformedFlood(t *testing.T) {
	const lines = 100_000
	e := mcpxtest.NewEnv(t)
	cfg := harness.WriteServers(t, e, nil, map[string]any{"junk": harness.FixtureServer("garbage", nil)})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	res := h.Result(h.Request("tools/call", map[string]any{"name": "junk__work", "arguments": map[string]any{"count": lines}}), harness.WaitLong)
	if got := harness.ResultText(t, res); got != "wrote 100000" {
		t.Fatalf("result %q", got)
	}
	h.Close()
	e.StopDaemons() // the upstream's connection ends: the count is logged

	logs, _ := filepath.Glob(filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "daemon-*.log*"))
	if len(logs) != 1 {
		t.Fatalf("daemon logs %v: want one, not rotated", logs)
	}
	b, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	var logged, notes, left int
	for line := range strings.SplitSeq(string(b), "\n") {
		var rec struct {
			Msg   string `json:"msg"`
			Count int    `json:"count"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		switch rec.Msg {
		case "upstream sent a malformed message":
			logged++
		case "upstream malformed messages not logged (rate limit)":
			notes++
			left += rec.Count
		}
	}
	t.Logf("daemon log: %d malformed lines logged, %d notes counting %d more, %d bytes", logged, notes, left, len(b))
	if logged > 30 {
		t.Errorf("%d malformed lines logged one by one", logged)
	}
	if logged+left != lines {
		t.Errorf("logged %d and counted %d malformed lines; want %d in all", logged, left, lines)
	}
	if !strings.Contains(string(b), `"msg":"daemon listening"`) {
		t.Error("the daemon's start is no longer in its log")
	}
}
