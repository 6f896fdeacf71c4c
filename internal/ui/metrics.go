package ui

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"mcpx/internal/apitype"
	"mcpx/internal/relay"
)

// Metrics are the daemon's Prometheus metrics. Counters and histograms
// are fed by its observer methods; gauges of state (hosts connected,
// upstreams ready) are read from the Source at each scrape.
type Metrics struct {
	reg    *prometheus.Registry
	labels labeler

	calls        *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	inFlight     *prometheus.GaugeVec
	cancels      *prometheus.CounterVec
	progress     *prometheus.CounterVec
	starts       *prometheus.CounterVec
	restarts     *prometheus.CounterVec
	startFails   *prometheus.CounterVec
	crashes      *prometheus.CounterVec
	queueWaits   *prometheus.CounterVec
	queueLatency *prometheus.HistogramVec
	jobs         *prometheus.CounterVec
	jobsInFlight prometheus.Gauge
}

// NewMetrics returns the metrics of a daemon whose state status reads.
func NewMetrics(status func() apitype.Status) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "mcpx", Name: name, Help: help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	m.calls = counter("calls_total", "Tool calls relayed, by server, tool and outcome (ok, tool_error, error, busy, timeout, cancelled, failed).", "server", "tool", "outcome")
	m.cancels = counter("call_cancels_total", "Tool calls ended by a cancellation or a timeout, by server and cause (host_cancelled, host_disconnected, idle_timeout, hard_timeout, stopping, user_interrupt, client_disconnected).", "server", "cause")
	m.progress = counter("progress_relayed_total", "Progress notifications of tool calls whose value advanced (those passed on to a host that asked for progress), by server.", "server")
	m.starts = counter("upstream_starts_total", "Upstream sessions started, by server.", "server")
	m.restarts = counter("upstream_restarts_total", "Upstream sessions started for a server that had started before (after a crash, an idle stop or a restart), by server.", "server")
	m.startFails = counter("upstream_start_failures_total", "Upstream starts that failed, by server.", "server")
	m.crashes = counter("upstream_crashes_total", "Upstream sessions that ended on their own (the process exited or the connection failed), by server.", "server")
	m.queueWaits = counter("queue_waits_total", "Tool calls that waited in their upstream's queue for a call slot, by server and whether they got one.", "server", "admitted")
	m.jobs = counter("jobs_total", "Jobs (calls and scripts kept past their host's answer) that ended, by outcome (completed, failed, cancelled, interrupted: left running at a stop of mcpx).", "outcome")
	m.jobsInFlight = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "mcpx", Name: "jobs_in_flight", Help: "Jobs this daemon is running."})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "mcpx", Name: "call_duration_seconds", Help: "How long tool calls took, from the relay taking them to their end, by server and tool.",
		Buckets: []float64{0.005, 0.025, 0.1, 0.5, 1, 5, 30, 120, 600, 3600},
	}, []string{"server", "tool"})
	m.queueLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "mcpx", Name: "queue_wait_seconds", Help: "How long tool calls waited in their upstream's queue for a call slot, by server.",
		Buckets: []float64{0.001, 0.01, 0.1, 1, 10, 60},
	}, []string{"server"})
	m.inFlight = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "mcpx", Name: "calls_in_flight", Help: "Tool calls under way, by server."}, []string{"server"})
	m.reg.MustRegister(m.latency, m.queueLatency, m.inFlight, m.jobsInFlight,
		&stateCollector{status: status},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// LabelOnly makes known decide which server and tool names label the
// metrics; the others are counted as OtherLabel. Without it every name is
// a label value, within the bounds. It is called before any call is
// observed (the daemon wires it), once.
func (m *Metrics) LabelOnly(known Known) { m.labels.known = known }

// Handler serves the metrics page in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// The observer side: relay.Observer and upstream.Observer.

func (m *Metrics) callStarted(c relay.CallInfo) {
	// The tool's label is decided as the call starts, while its server's
	// listing is there (a crash ending the call ends the listing too).
	server, _ := m.labels.call(c.Server, c.Tool, false)
	m.inFlight.WithLabelValues(server).Inc()
}

func (m *Metrics) jobStarted() { m.jobsInFlight.Inc() }

func (m *Metrics) jobEnded(status string) {
	m.jobsInFlight.Dec()
	m.jobs.WithLabelValues(status).Inc()
}

func (m *Metrics) callEnded(c relay.CallInfo, outcome relay.Outcome, took time.Duration, err error) {
	server, tool := m.labels.call(c.Server, c.Tool, outcome == relay.OutcomeOK)
	m.inFlight.WithLabelValues(server).Dec()
	m.calls.WithLabelValues(server, tool, string(outcome)).Inc()
	m.latency.WithLabelValues(server, tool).Observe(took.Seconds())
	if cause, ok := relay.CauseOf(err); ok {
		m.cancels.WithLabelValues(server, causeName(cause)).Inc()
	}
}

func (m *Metrics) progressAdvanced(c relay.CallInfo) {
	m.progress.WithLabelValues(m.labels.server(c.Server)).Inc()
}

func (m *Metrics) queueWaited(server string, waited time.Duration, admitted bool) {
	server = m.labels.server(server)
	m.queueWaits.WithLabelValues(server, strconv.FormatBool(admitted)).Inc()
	m.queueLatency.WithLabelValues(server).Observe(waited.Seconds())
}

func (m *Metrics) upstreamStarted(server string, restart bool) {
	server = m.labels.pooled(server)
	m.starts.WithLabelValues(server).Inc()
	if restart {
		m.restarts.WithLabelValues(server).Inc()
	}
}

func (m *Metrics) upstreamStartFailed(server string) {
	m.startFails.WithLabelValues(m.labels.pooled(server)).Inc()
}

func (m *Metrics) upstreamCrashed(server string) {
	m.crashes.WithLabelValues(m.labels.pooled(server)).Inc()
}

// causeName is a cause's label: its kind, or "cancelled" for one with
// none.
func causeName(c *relay.Cause) string {
	if s := c.Kind.String(); s != "" {
		return s
	}
	return "cancelled"
}

// stateCollector reads the daemon's state at each scrape, as mcpx status
// does: hosts connected and upstreams ready.
type stateCollector struct {
	status func() apitype.Status
}

var (
	hostsDesc = prometheus.NewDesc("mcpx_hosts_connected", "Hosts connected, by transport (stdio: host streams through mcpx serve; http: open legacy HTTP sessions).", []string{"transport"}, nil)
	upDesc    = prometheus.NewDesc("mcpx_upstream_up", "1 when the upstream server has a live session, else 0, by server.", []string{"server"}, nil)
	skewDesc  = prometheus.NewDesc("mcpx_job_store_clock_skew_seconds", "How far this daemon's clock is ahead of the shared job store's (behind if negative), at the last lease renewal.", nil, nil)
	leaseDesc = prometheus.NewDesc("mcpx_job_leases_lost", "1 when the job store has not answered a renewal of this daemon's job leases for a whole lease term (another replica may take its jobs), else 0.", nil, nil)
)

func (s *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- hostsDesc
	ch <- upDesc
	ch <- leaseDesc
	ch <- skewDesc
}

func (s *stateCollector) Collect(ch chan<- prometheus.Metric) {
	if s.status == nil {
		ch <- prometheus.NewInvalidMetric(hostsDesc, errors.New("no status source"))
		return
	}
	st := s.status()
	ch <- prometheus.MustNewConstMetric(hostsDesc, prometheus.GaugeValue, float64(st.Hosts), "stdio")
	ch <- prometheus.MustNewConstMetric(hostsDesc, prometheus.GaugeValue, float64(st.HTTPSessions), "http")
	for _, u := range st.Upstreams {
		up := 0.0
		if u.State == "ready" {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, up, u.Name)
	}
	if l := st.JobLeases; l != nil {
		lost := 0.0
		if l.Lost {
			lost = 1
		}
		ch <- prometheus.MustNewConstMetric(leaseDesc, prometheus.GaugeValue, lost)
		ch <- prometheus.MustNewConstMetric(skewDesc, prometheus.GaugeValue, float64(l.SkewMs)/1000)
	}
}
