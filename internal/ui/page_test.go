package ui

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/relay"
)

// TestMetricsFullPage: with every family of the daemon's metrics given a
// series (calls, cancels, progress, queue, upstream life, jobs, state,
// job leases) the page has each family under its name and type, and
// promtool accepts it.
func TestMetricsFullPage(t *testing.T) {
	m := NewMetrics(func() apitype.Status {
		return apitype.Status{Hosts: 2, HTTPSessions: 1,
			Upstreams: []apitype.Upstream{{Name: "demo", State: "ready"}, {Name: "down", State: "failed"}},
			JobLeases: &apitype.JobLeases{SkewMs: 250}}
	})
	o := NewObserver(m, nil)
	c := relay.CallInfo{ID: 1, Server: "demo", Tool: "export", Host: "host-1"}
	o.CallStarted(c)
	o.ProgressAdvanced(c)
	o.CallEnded(c, relay.OutcomeCancelled, 40*time.Millisecond, &relay.Cause{Kind: relay.HostCancelled})
	o.QueueWaited("demo", 3*time.Millisecond, true)
	o.UpstreamStarted("demo", false)
	o.UpstreamStarted("demo", true)
	o.UpstreamStartFailed("down", errors.New("exit 1"))
	o.UpstreamCrashed("demo", errors.New("exit 2"))
	o.JobStarted("demo", "export")
	o.JobStarted("demo", "export")
	o.JobEnded("demo", "export", "completed")

	page := scrapePage(t, m)
	for _, want := range []string{
		"# TYPE mcpx_calls_total counter\n",
		"# TYPE mcpx_call_cancels_total counter\n",
		"# TYPE mcpx_call_duration_seconds histogram\n",
		"# TYPE mcpx_calls_in_flight gauge\n",
		"# TYPE mcpx_progress_relayed_total counter\n",
		"# TYPE mcpx_queue_waits_total counter\n",
		"# TYPE mcpx_queue_wait_seconds histogram\n",
		"# TYPE mcpx_upstream_starts_total counter\n",
		"# TYPE mcpx_upstream_restarts_total counter\n",
		"# TYPE mcpx_upstream_start_failures_total counter\n",
		"# TYPE mcpx_upstream_crashes_total counter\n",
		"# TYPE mcpx_jobs_total counter\n",
		"# TYPE go_gc_duration_seconds summary\n",
		"# TYPE process_cpu_seconds_total counter\n",
		`mcpx_call_cancels_total{cause="host_cancelled",server="demo"} 1` + "\n",
		`mcpx_call_duration_seconds_bucket{server="demo",tool="export",le="0.1"} 1` + "\n",
		`mcpx_queue_wait_seconds_bucket{server="demo",le="0.001"} 0` + "\n",
		`mcpx_queue_wait_seconds_bucket{server="demo",le="0.01"} 1` + "\n",
		`mcpx_hosts_connected{transport="http"} 1` + "\n",
		`mcpx_hosts_connected{transport="stdio"} 2` + "\n",
		`mcpx_upstream_up{server="demo"} 1` + "\n",
		`mcpx_upstream_up{server="down"} 0` + "\n",
		`mcpx_upstream_restarts_total{server="demo"} 1` + "\n",
		`mcpx_jobs_in_flight 1` + "\n",
		`mcpx_jobs_total{outcome="completed"} 1` + "\n",
		`mcpx_job_leases_lost 0` + "\n",
		`mcpx_job_store_clock_skew_seconds 0.25` + "\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	tool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not installed on CI")
		}
		t.Skip("promtool not found (Debian package prometheus): the page was not linted")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, "check", "metrics")
	cmd.Stdin = strings.NewReader(page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s\n%s", err, out, page)
	}
}
