package hostile

import (
	"strings"
	"sync"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestBurstIsBackPressure: a host sends twenty calls of a quarter of the
// message limit at once to a shared stdio upstream while another host's
// call runs: more than the upstream's input queue holds (four messages at
// the limit; the limit is 2 MiB here, so that the race detector's build
// copes: the default, 16 MiB, makes it 64 MiB and twenty 4 MiB calls). A full queue is back-pressure,
// not a dead upstream: each call either runs or is refused with
// upstream_busy (-31004), the other host's call ends well, no call fails
// with "stopped reading its input", and the upstream is never restarted.
func TestBurstIsBackPressure(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(map[string]any{"maxConcurrentCalls": 64, "queueLength": 64, "maxMessageBytes": 2 << 20}, mcpxtest.Demo{Name: "demo"})
	m := harness.StartHTTP(t, e, mcpxtest.InProcess, cfg, false)
	other := harness.NewRawHost(t, m)
	other.Initialize("2025-11-25")
	otherDone := make(chan *harness.HttpReply, 1)
	go func() {
		otherDone <- other.Do(harness.CallBody("other", "demo__sleep_then", map[string]any{"seconds": 2, "text": "other host done"}, nil), nil)
	}()

	big := strings.Repeat("x", 512<<10)
	burst := harness.NewRawHost(t, m)
	burst.Initialize("2025-11-25")
	var wg sync.WaitGroup
	replies := make([]*harness.HttpReply, 20)
	for i := range replies {
		wg.Go(func() { replies[i] = burst.Do(harness.CallBody(i, "demo__echo", map[string]any{"big": big}, nil), nil) })
	}
	wg.Wait()
	ran, busy := 0, 0
	for i, r := range replies {
		switch {
		case r == nil: // its request failed, and said so above
			t.Errorf("call %d: no reply", i)
		case len(r.Msgs) != 1:
			t.Errorf("call %d: %d %.300s", i, r.Status, r.Body)
		case r.Msgs[0].Error == nil:
			ran++
		case r.Msgs[0].Error.Code == -31004 && strings.Contains(string(r.Msgs[0].Error.Data), "upstream_busy"):
			busy++
		default:
			t.Errorf("call %d: error %d %s, want a result or upstream_busy", i, r.Msgs[0].Error.Code, r.Msgs[0].Error.Message)
		}
	}
	t.Logf("%d calls ran, %d were refused as busy", ran, busy)
	r := <-otherDone
	if len(r.Msgs) != 1 || r.Msgs[0].Error != nil || harness.ResultText(t, r.Msgs[0].Result) != "other host done" {
		t.Errorf("the other host's call: %d %.300s", r.Status, r.Body)
	}
	if n := strings.Count(m.Logs(), "upstream started"); n != 1 {
		t.Errorf("the upstream started %d times, want once", n)
	}
	if strings.Contains(m.Logs(), "not reading its input") {
		t.Errorf("mcpx took the upstream for stalled")
	}
}
