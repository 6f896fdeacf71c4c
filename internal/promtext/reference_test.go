package promtext

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The page is checked against Prometheus's own Go client and parser: the
// reference for what scrapers and dashboards already read.

// reference writes what Prometheus's Go client writes for the families
// of g.
func reference(t *testing.T, g prometheus.Gatherer) string {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, f := range fams {
		if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestSameBytesAsClient: counters, gauges and histograms with labels
// given out of order, values that need escapes, large counts and an
// observation past every bucket make the same page, byte for byte, as
// the Prometheus client given the same updates.
func TestSameBytesAsClient(t *testing.T) {
	ours, ref := NewRegistry(), prometheus.NewRegistry()
	c := ours.Counter("x_calls_total", "Calls \\ by\nserver.", "server", "tool", "outcome")
	rc := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_calls_total", Help: "Calls \\ by\nserver."}, []string{"server", "tool", "outcome"})
	buckets := []float64{0.005, 0.025, 0.1, 0.5, 1, 5, 30, 120, 600, 3600}
	h := ours.Histogram("x_seconds", "Seconds.", buckets, "server", "tool")
	rh := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "x_seconds", Help: "Seconds.", Buckets: buckets}, []string{"server", "tool"})
	g := ours.Gauge("x_in_flight", "In flight.", "server")
	rg := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "x_in_flight", Help: "In flight."}, []string{"server"})
	j := ours.Gauge("x_jobs", "Jobs.").With()
	rj := prometheus.NewGauge(prometheus.GaugeOpts{Name: "x_jobs", Help: "Jobs."})
	ours.Counter("x_empty_total", "Empty.", "server")
	re := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_empty_total", Help: "Empty."}, []string{"server"})
	ref.MustRegister(rc, rh, rg, rj, re)

	names := []string{"demo", "b", "a\"q\\uote\nnl", "zz", "ünï"}
	for i := range 3000 {
		s, tool := names[i%len(names)], names[(i/5)%len(names)]
		outcome := []string{"ok", "error", "cancelled"}[i%3]
		c.With(s, tool, outcome).Inc()
		rc.WithLabelValues(s, tool, outcome).Inc()
		v := float64(i%97) * 0.37
		if i%500 == 0 {
			v = 1e4
		}
		h.With(s, tool).Observe(v)
		rh.WithLabelValues(s, tool).Observe(v)
		g.With(s).Inc()
		rg.WithLabelValues(s).Inc()
		if i%2 == 0 {
			g.With(s).Dec()
			rg.WithLabelValues(s).Dec()
		}
	}
	for range 1_234_567 {
		c.With("big", "t", "ok").Inc()
	}
	rc.WithLabelValues("big", "t", "ok").Add(1_234_567)
	j.Inc()
	rj.Inc()

	got, want := page(t, ours), reference(t, ref)
	if got != want {
		t.Errorf("the pages differ:\n%s", firstDiff(got, want))
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return "line " + itoa(i+1) + ":\n ours: " + g[i] + "\n  ref: " + w[i]
		}
	}
	return "lengths " + itoa(len(g)) + " and " + itoa(len(w))
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestRuntimeFamiliesAsClient: the Go runtime's and the process's
// families have the names, types and help of the Prometheus client's
// collectors, and the page parses.
func TestRuntimeFamiliesAsClient(t *testing.T) {
	ours := NewRegistry()
	RegisterGo(ours)
	RegisterProcess(ours)
	ref := prometheus.NewRegistry()
	ref.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	heads := func(page string) []string {
		var out []string
		for l := range strings.Lines(page) {
			if strings.HasPrefix(l, "# ") {
				out = append(out, l)
			}
		}
		return out
	}
	p := page(t, ours)
	if got, want := heads(p), heads(reference(t, ref)); !slices.Equal(got, want) {
		t.Errorf("HELP and TYPE lines:\n%s\nwant:\n%s", strings.Join(got, ""), strings.Join(want, ""))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(p))
	if err != nil {
		t.Fatalf("parsing the page: %v\n%s", err, p)
	}
	for name, min := range map[string]float64{"go_goroutines": 1, "go_threads": 1, "go_memstats_sys_bytes": 1 << 20,
		"process_cpu_seconds_total": 0.001, "process_resident_memory_bytes": 1 << 20, "process_open_fds": 3, "process_max_fds": 3,
		"process_start_time_seconds": 1.5e9} {
		f := fams[name]
		if f == nil {
			t.Errorf("no %s", name)
			continue
		}
		m := f.GetMetric()[0]
		if v := m.GetGauge().GetValue() + m.GetCounter().GetValue(); v < min {
			t.Errorf("%s = %v, want at least %v", name, v, min)
		}
	}
	if v := fams["go_info"].GetMetric()[0].GetLabel()[0].GetValue(); !strings.HasPrefix(v, "go") {
		t.Errorf("go_info's version %q", v)
	}
	checkPromtool(t, p)
}

// checkPromtool has promtool lint page; without promtool it skips, except
// on CI, which installs it.
func checkPromtool(t *testing.T, page string) {
	t.Helper()
	tool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not installed on CI")
		}
		t.Skip("promtool not found (Debian package prometheus): the page was not linted")
	}
	cmd := exec.Command(tool, "check", "metrics")
	cmd.Stdin = strings.NewReader(page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s\n%s", err, out, page)
	}
}
