package liveview

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"mcpx/internal/apitype"
	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
}

// TestLiveViewBrowser drives the live view in headless Chromium: a long
// call started by a host shows with its progress advancing; the page's
// cancel button cancels it, and the upstream sees the cancellation with
// the reason a person's interrupt gives. It logs how long each progress
// value took from reaching the host to being shown on the page.
func TestLiveViewBrowser(t *testing.T) {
	bctx := harness.Chromium(t)
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	dir := artifactDir(t)

	id := harness.SendCall(h, "900", "demo__export", map[string]any{"seconds": 60, "steps": 240}, map[string]any{"progressToken": "lv", harness.MarkerKey: "browser-cancel"})
	if err := chromedp.Do(bctx, chromedp.Navigate(harness.UiLink(t, e, cfg))); err != nil {
		t.Fatalf("opening the link: %v", err)
	}
	harness.PollPage(t, bctx, "the call in the page", `document.querySelector("#calls tbody tr[data-call-id]") !== null`)
	harness.PollPage(t, bctx, "the host in the page", `(() => { const r = document.querySelector("#hostlist tbody tr[data-host]"); return r !== null && r.textContent.includes("mcpxtest") })()`)
	first, err := chromedp.Run(bctx, chromedp.AttributeValue(chromedp.CSS(`#calls tbody tr[data-call-id]`), "data-progress"))
	if err != nil {
		t.Fatal(err)
	}
	harness.PollPage(t, bctx, "progress advancing on the page",
		`(() => { const r = document.querySelector("#calls tbody tr[data-call-id]"); return r !== null && Number(r.dataset.progress) >= 25 })()`)
	screenshot(t, bctx, dir, "1-call-in-flight")

	callID, err := chromedp.Run(bctx, chromedp.AttributeValue(chromedp.CSS(`#calls tbody tr[data-call-id]`), "data-call-id"))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`#calls button.cancel`))); err != nil {
		t.Fatalf("clicking cancel: %v", err)
	}
	up := harness.UpstreamRequest(e, "demo", "browser-cancel")
	ev := harness.UpstreamCancel(e, "demo", up.ID)
	harness.CheckCancel(t, ev, "interrupted by user")
	e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool {
		return ev.Event == demo.EventFinished && string(ev.ID) == string(up.ID) && ev.Outcome == demo.OutcomeCancelled
	})
	if err, _ := harness.ResponseError(t, h, id); err.Kind != "user_interrupt" {
		t.Errorf("the host's error kind = %q, want user_interrupt", err.Kind)
	}
	harness.PollPage(t, bctx, "the cancel in the page's recent list",
		`document.querySelector('#recent tr[data-kind="cancelled"]') !== null && document.querySelector("#calls tbody tr[data-call-id]") === null`)
	screenshot(t, bctx, dir, "2-cancelled")

	// A job shows with its progress; its cancel button is mcpx jobs
	// cancel's: the upstream is told the live view cancelled the job.
	job := harness.JobOf(t, h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_call", "arguments": map[string]any{
		"name": "demo__export", "arguments": map[string]any{"seconds": 60, "steps": 240}, "background": true}}), harness.WaitLong)).JobID
	harness.PollPage(t, bctx, "the job's progress on the page",
		`(() => { const r = document.querySelector('#jobs tbody tr[data-job="`+job+`"]'); return r !== null && Number(r.dataset.progress) >= 2 })()`)
	screenshot(t, bctx, dir, "2a-job-running")
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`#jobs button.cancel-job[data-job="`+job+`"]`))); err != nil {
		t.Fatalf("clicking the job's cancel: %v", err)
	}
	jobCancel := e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool {
		return ev.Event == "cancelled" && ev.Reason == "job cancelled with the live view"
	})
	if st := harness.JobOf(t, h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": job}}), harness.WaitLong)); st.Status != "cancelled" {
		t.Errorf("the job after the page's cancel: %+v", st)
	}
	harness.PollPage(t, bctx, "the job gone from the page", `document.querySelector("#jobs tbody tr[data-job]") === null`)
	screenshot(t, bctx, dir, "2b-job-cancelled")
	t.Logf("job %s cancelled from the page; the upstream saw %q", job, jobCancel.Reason)

	// The restart button restarts the server: a new process.
	pid := harness.DaemonStatus(t, e, cfg).Upstreams[0].PID
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`#servers button.restart[data-server="demo"]`))); err != nil {
		t.Fatalf("clicking restart: %v", err)
	}
	harness.WaitStatus(t, e, cfg, "demo restarted from the page", func(st apitype.Status) bool {
		u := st.Upstreams[0]
		return u.Starts == 2 && u.State == "ready" && u.PID != pid
	})
	harness.PollPage(t, bctx, "the restart in the page", `(() => { const r = document.querySelector('#servers tr[data-server="demo"]'); return r !== null && r.children[4].textContent === "2" })()`)
	screenshot(t, bctx, dir, "3-restarted")
	t.Logf("call #%s (first shown at progress %q) cancelled from the page; the upstream saw %q", callID.Value, first.Value, ev.Reason)

	// Update latency: each progress value the page showed, from the
	// moment the host received the same notification.
	var updates []struct {
		Progress float64 `json:"progress"`
		At       float64 `json:"at"`
	}
	raw, err := chromedp.Run(bctx, chromedp.Evaluate[string](`JSON.stringify(window.mcpxUpdates)`))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(raw), &updates); err != nil {
		t.Fatal(err)
	}
	atHost := map[float64]time.Time{}
	for _, r := range harness.ProgressFor(t, h, `"lv"`) {
		p, _ := harness.AsProgress(t, r)
		atHost[p.Progress] = r.At
	}
	// The first value shown may have reached the host before the page
	// opened: it does not count.
	var lat []float64
	for _, u := range updates[min(1, len(updates)):] {
		if at, ok := atHost[u.Progress]; ok {
			lat = append(lat, u.At-float64(at.UnixNano())/1e6)
		}
	}
	if len(lat) == 0 {
		t.Fatalf("the page showed no progress value the host received: page %s", raw)
	}
	slices.Sort(lat)
	t.Logf("live view update latency (host receives progress -> page shows it), %d values: p50 %s ms, p90 %s ms, max %s ms",
		len(lat), ms(lat[len(lat)/2]), ms(lat[len(lat)*9/10]), ms(lat[len(lat)-1]))
}

func ms(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// TestLiveViewLoadCPU measures the daemon's CPU time (its own
// process_cpu_seconds_total) over 1,000 tool calls with progress, 50 at
// a time, with no page open and then with the live view open in
// Chromium. It logs both and asserts no bound. A measurement, it does
// not run under the race detector (as CI runs the tests): run it with
// go test -run TestLiveViewLoadCPU -v ./internal/e2e.
func TestLiveViewLoadCPU(t *testing.T) {
	if mcpxtest.RaceEnabled() {
		t.Skip("a CPU measurement: the race detector's cost would swamp it; run it without -race")
	}
	bctx := harness.Chromium(t)
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	socket := harness.DaemonStatus(t, e, cfg).Socket
	cpu := func() float64 {
		_, page := harness.SocketGet(t, socket, "/metrics")
		return harness.ParseMetrics(t, page).Value("process_cpu_seconds_total")
	}
	next := 0
	load := func() (float64, time.Duration) {
		const calls, window = 1000, 50
		c0, t0 := cpu(), time.Now()
		var ids []jsonrpc.ID
		for i := range calls {
			next++
			raw := strconv.Itoa(10000 + next)
			ids = append(ids, harness.SendCall(h, raw, "demo__export", map[string]any{"seconds": 0.05, "steps": 5}, map[string]any{"progressToken": "load-" + raw}))
			if len(ids) == window || i == calls-1 {
				for _, id := range ids {
					h.Result(id, harness.WaitLong)
				}
				ids = ids[:0]
			}
		}
		return cpu() - c0, time.Since(t0)
	}
	load() // warm up: the upstream starts, the daemon's pools fill
	closedCPU, closedWall := load()
	if err := chromedp.Do(bctx, chromedp.Navigate(harness.UiLink(t, e, cfg))); err != nil {
		t.Fatalf("opening the link: %v", err)
	}
	harness.PollPage(t, bctx, "the page live", `document.querySelector("#conn.live") !== null`)
	openCPU, openWall := load()
	harness.PollPage(t, bctx, "the page still live", `document.querySelector("#conn.live") !== null`)
	t.Logf("daemon CPU over 1,000 calls (5 progress each, 50 at a time): page closed %.2fs CPU in %.2fs; page open %.2fs CPU in %.2fs",
		closedCPU, closedWall.Seconds(), openCPU, openWall.Seconds())
}
