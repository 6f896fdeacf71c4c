package daemon

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// checkPromtool has promtool lint the page; without promtool it skips,
// except on CI, which installs it.
func checkPromtool(t *testing.T, page []byte) {
	t.Helper()
	tool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("promtool is not installed on CI (.ci/run installs Debian's prometheus package)")
		}
		t.Log("promtool not found (Debian package prometheus): the metrics page was not linted")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), harness.WaitLong)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(page)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
	t.Logf("promtool check metrics accepts the page (%d bytes)", len(page))
}

// TestMetricsCountCalls reads the daemon's counters before and after known
// calls through a real host and the demo upstream: three echoes and an
// export with progress end ok, one export the host cancels ends
// cancelled with cause host_cancelled; progress, latency, hosts and the
// upstream's start show too, and promtool accepts the page.
func TestMetricsCountCalls(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	socket := harness.DaemonStatus(t, e, cfg).Socket
	get := func() ([]byte, harness.Scrape) {
		code, page := harness.SocketGet(t, socket, apitype.PathMetrics)
		if code != http.StatusOK {
			t.Fatalf("GET /metrics: %d %s", code, page)
		}
		return page, harness.ParseMetrics(t, page)
	}
	_, before := get()

	for i := range 3 {
		id := h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"i": i}})
		h.Result(id, harness.WaitLong)
	}
	id := harness.SendCall(h, "700", "demo__export", map[string]any{"seconds": 0.2, "steps": 4}, map[string]any{"progressToken": "m-700"})
	h.Result(id, harness.WaitLong)
	harness.SendCall(h, "701", "demo__export", map[string]any{"seconds": 30, "steps": 30}, map[string]any{"progressToken": "m-701", harness.MarkerKey: "metrics-cancel"})
	h.WaitFor(harness.WaitLong, "first progress of the call to cancel", func(r mcpxtest.Received) bool {
		p, ok := harness.AsProgress(t, r)
		return ok && string(p.Token) == `"m-701"`
	})
	harness.Cancel(h, "701", "metrics test")
	harness.UpstreamCancel(e, "demo", harness.UpstreamRequest(e, "demo", "metrics-cancel").ID)

	// The cancelled call's end is counted as the relay returns, just
	// after the upstream was told: poll for it.
	var page []byte
	var after harness.Scrape
	deadline := time.Now().Add(harness.WaitLong)
	for {
		page, after = get()
		if after.Value("mcpx_calls_total", "outcome=cancelled") > before.Value("mcpx_calls_total", "outcome=cancelled") || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	delta := func(name string, labels ...string) float64 {
		return after.Value(name, labels...) - before.Value(name, labels...)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"mcpx_calls_total", []string{"server=demo", "tool=echo", "outcome=ok"}, 3},
		{"mcpx_calls_total", []string{"server=demo", "tool=export", "outcome=ok"}, 1},
		{"mcpx_calls_total", []string{"server=demo", "tool=export", "outcome=cancelled"}, 1},
		{"mcpx_calls_total", nil, 5},
		{"mcpx_call_cancels_total", []string{"server=demo", "cause=host_cancelled"}, 1},
		{"mcpx_call_cancels_total", nil, 1},
		{"mcpx_call_duration_seconds", []string{"server=demo", "tool=echo"}, 3},
		{"mcpx_call_duration_seconds", []string{"server=demo", "tool=export"}, 2},
	} {
		if got := delta(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v rose by %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := delta("mcpx_progress_relayed_total", "server=demo"); got < 5 {
		t.Errorf("progress relayed rose by %v; the export sent 4 and the cancelled one at least 1", got)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"mcpx_calls_in_flight", []string{"server=demo"}, 0},
		{"mcpx_hosts_connected", []string{"transport=stdio"}, 1},
		{"mcpx_upstream_up", []string{"server=demo"}, 1},
		{"mcpx_upstream_starts_total", []string{"server=demo"}, 1},
		{"mcpx_upstream_crashes_total", []string{"server=demo"}, 0},
	} {
		if got := after.Value(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if after.Value("process_cpu_seconds_total") <= 0 {
		t.Errorf("process_cpu_seconds_total is missing or 0")
	}
	checkPromtool(t, page)

	// Jobs: the gauge counts the running one; one completes, one is
	// cancelled.
	before = after
	background := func(tool string, args map[string]any) string {
		return harness.JobOf(t, h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_call", "arguments": map[string]any{
			"name": tool, "arguments": args, "background": true}}), harness.WaitLong)).JobID
	}
	long := background("demo__wait", map[string]any{"seconds": 60})
	if _, during := get(); during.Value("mcpx_jobs_in_flight") != 1 {
		t.Errorf("mcpx_jobs_in_flight = %v with one job running, want 1", during.Value("mcpx_jobs_in_flight"))
	}
	quick := background("demo__sleep_then", map[string]any{"seconds": 0.1, "text": "quick"})
	if st := harness.JobOf(t, h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_job_cancel", "arguments": map[string]any{"job_id": long}}), harness.WaitLong)); st.Status != "cancelled" {
		t.Fatalf("mcpx_job_cancel: %+v", st)
	}
	if res := h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": quick, "wait_seconds": 30}}), harness.WaitLong); !strings.Contains(string(res), "quick") {
		t.Fatalf("mcpx_job of the quick job: %s", res)
	}
	// Counted as the job's end is written: poll for it.
	for deadline := time.Now().Add(harness.WaitLong); ; {
		page, after = get()
		if after.Value("mcpx_jobs_total", "outcome=completed") > before.Value("mcpx_jobs_total", "outcome=completed") || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range []struct {
		outcome string
		want    float64
	}{{"completed", 1}, {"cancelled", 1}, {"failed", 0}, {"interrupted", 0}} {
		if got := delta("mcpx_jobs_total", "outcome="+c.outcome); got != c.want {
			t.Errorf("mcpx_jobs_total{outcome=%s} rose by %v, want %v", c.outcome, got, c.want)
		}
	}
	if got := after.Value("mcpx_jobs_in_flight"); got != 0 {
		t.Errorf("mcpx_jobs_in_flight = %v after both ended, want 0", got)
	}
	checkPromtool(t, page)
}

// TestMetricsHTTPNeedsToken: with an HTTP listener, /metrics is served
// there too, behind the bearer token, and refuses a foreign Host.
func TestMetricsHTTPNeedsToken(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(map[string]any{"http": map[string]any{"listen": "127.0.0.1:0"}}, mcpxtest.Demo{Name: "demo"})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	id := h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{}})
	h.Result(id, harness.WaitLong)
	st := harness.DaemonStatus(t, e, cfg)
	if st.HTTP == "" {
		t.Fatalf("the daemon has no HTTP listener: %+v", st)
	}
	tok, err := os.ReadFile(st.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSuffix(st.HTTP, apitype.PathMCP) + apitype.PathMetrics
	get := func(header map[string]string, host string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	bearer := map[string]string{"Authorization": "Bearer " + strings.TrimSpace(string(tok))}
	if code, body := get(nil, ""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d %s, want 401", code, body)
	}
	if code, body := get(map[string]string{"Authorization": "Bearer wrong"}, ""); code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d %s, want 401", code, body)
	}
	if code, body := get(bearer, "evil.example:80"); code != http.StatusForbidden {
		t.Errorf("a foreign Host: %d %s, want 403", code, body)
	}
	code, body := get(bearer, "")
	if code != http.StatusOK {
		t.Fatalf("with the token: %d %s", code, body)
	}
	s := harness.ParseMetrics(t, []byte(body))
	if got := s.Value("mcpx_calls_total", "server=demo", "tool=echo", "outcome=ok"); got != 1 {
		t.Errorf("echo calls over HTTP's /metrics = %v, want 1", got)
	}
	if got := s.Value("mcpx_hosts_connected", "transport=stdio"); got != 1 {
		t.Errorf("hosts connected = %v, want 1", got)
	}
	t.Logf("GET %s with the token: %d bytes", url, len(body))
}

// TestMetricsUpstreamLife: a call that waits for a call slot counts as a
// queue wait; a crash of the upstream counts as one, with the call it
// took down failed; the start after it counts as a start and a restart.
func TestMetricsUpstreamLife(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo", Fields: map[string]any{
		"maxConcurrentCalls": 1, "queueLength": 2, "queueTimeout": "30s"}})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	// Listed, as hosts do: a tool is labelled by its name once its
	// server's listing has it (or its upstream answered it with a result).
	h.Result(h.Request("tools/list", map[string]any{}), harness.WaitLong)
	h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{}}), harness.WaitLong)
	socket := harness.DaemonStatus(t, e, cfg).Socket
	get := func() harness.Scrape {
		code, page := harness.SocketGet(t, socket, apitype.PathMetrics)
		if code != http.StatusOK {
			t.Fatalf("GET /metrics: %d %s", code, page)
		}
		return harness.ParseMetrics(t, page)
	}
	before := get()

	harness.SendCall(h, "800", "demo__export", map[string]any{"seconds": 30, "steps": 30}, map[string]any{"progressToken": "hold"})
	h.WaitFor(harness.WaitLong, "the slot holder's progress", func(r mcpxtest.Received) bool {
		p, ok := harness.AsProgress(t, r)
		return ok && string(p.Token) == `"hold"`
	})
	queued := h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"q": 1}})
	harness.WaitStatus(t, e, cfg, "the echo queued", func(st apitype.Status) bool { return len(st.Upstreams) == 1 && st.Upstreams[0].Queued == 1 })
	harness.Cancel(h, "800", "make room")
	h.Result(queued, harness.WaitLong)

	crash := h.Request("tools/call", map[string]any{"name": "demo__crash", "arguments": map[string]any{}})
	h.Response(crash, harness.WaitLong)
	h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"after": "crash"}}), harness.WaitLong)

	var after harness.Scrape
	for deadline := time.Now().Add(harness.WaitLong); ; {
		after = get()
		if after.Value("mcpx_upstream_crashes_total", "server=demo") > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"mcpx_queue_waits_total", []string{"server=demo", "admitted=true"}, 1},
		{"mcpx_queue_waits_total", []string{"server=demo", "admitted=false"}, 0},
		{"mcpx_queue_wait_seconds", []string{"server=demo"}, 1},
		{"mcpx_call_cancels_total", []string{"server=demo", "cause=host_cancelled"}, 1},
		{"mcpx_calls_total", []string{"server=demo", "tool=crash", "outcome=failed"}, 1},
		{"mcpx_upstream_crashes_total", []string{"server=demo"}, 1},
		{"mcpx_upstream_starts_total", []string{"server=demo"}, 1},
		{"mcpx_upstream_restarts_total", []string{"server=demo"}, 1},
	} {
		if got := after.Value(c.name, c.labels...) - before.Value(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v rose by %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}
