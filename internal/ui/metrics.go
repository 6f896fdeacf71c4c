package ui

import (
	"net/http"
	"strconv"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/promtext"
	"mcpx/internal/relay"
)

// Metrics are the daemon's Prometheus metrics. Counters and histograms
// are fed by its observer methods; gauges of state (hosts connected,
// upstreams ready) are read from the Source at each scrape.
type Metrics struct {
	reg    *promtext.Registry
	labels labeler

	calls        *promtext.CounterVec
	latency      *promtext.HistogramVec
	inFlight     *promtext.GaugeVec
	cancels      *promtext.CounterVec
	progress     *promtext.CounterVec
	starts       *promtext.CounterVec
	restarts     *promtext.CounterVec
	startFails   *promtext.CounterVec
	crashes      *promtext.CounterVec
	queueWaits   *promtext.CounterVec
	queueLatency *promtext.HistogramVec
	jobs         *promtext.CounterVec
	jobsInFlight *promtext.Gauge
}

// NewMetrics returns the metrics of a daemon whose state status reads.
func NewMetrics(status func() apitype.Status) *Metrics {
	r := promtext.NewRegistry()
	m := &Metrics{reg: r}
	m.calls = r.Counter("mcpx_calls_total", "Tool calls relayed, by server, tool and outcome (ok, tool_error, error, busy, timeout, cancelled, failed).", "server", "tool", "outcome")
	m.cancels = r.Counter("mcpx_call_cancels_total", "Tool calls ended by a cancellation or a timeout, by server and cause (host_cancelled, host_disconnected, idle_timeout, hard_timeout, stopping, user_interrupt, client_disconnected).", "server", "cause")
	m.progress = r.Counter("mcpx_progress_relayed_total", "Progress notifications of tool calls whose value advanced (those passed on to a host that asked for progress), by server.", "server")
	m.starts = r.Counter("mcpx_upstream_starts_total", "Upstream sessions started, by server.", "server")
	m.restarts = r.Counter("mcpx_upstream_restarts_total", "Upstream sessions started for a server that had started before (after a crash, an idle stop or a restart), by server.", "server")
	m.startFails = r.Counter("mcpx_upstream_start_failures_total", "Upstream starts that failed, by server.", "server")
	m.crashes = r.Counter("mcpx_upstream_crashes_total", "Upstream sessions that ended on their own (the process exited or the connection failed), by server.", "server")
	m.queueWaits = r.Counter("mcpx_queue_waits_total", "Tool calls that waited in their upstream's queue for a call slot, by server and whether they got one.", "server", "admitted")
	m.jobs = r.Counter("mcpx_jobs_total", "Jobs (calls and scripts kept past their host's answer) that ended, by outcome (completed, failed, cancelled, interrupted: left running at a stop of mcpx).", "outcome")
	m.jobsInFlight = r.Gauge("mcpx_jobs_in_flight", "Jobs this daemon is running.").With()
	m.latency = r.Histogram("mcpx_call_duration_seconds", "How long tool calls took, from the relay taking them to their end, by server and tool.",
		[]float64{0.005, 0.025, 0.1, 0.5, 1, 5, 30, 120, 600, 3600}, "server", "tool")
	m.queueLatency = r.Histogram("mcpx_queue_wait_seconds", "How long tool calls waited in their upstream's queue for a call slot, by server.",
		[]float64{0.001, 0.01, 0.1, 1, 10, 60}, "server")
	m.inFlight = r.Gauge("mcpx_calls_in_flight", "Tool calls under way, by server.", "server")
	registerState(r, status)
	promtext.RegisterGo(r)
	promtext.RegisterProcess(r)
	return m
}

// LabelOnly makes known decide which server and tool names label the
// metrics; the others are counted as OtherLabel. Without it every name is
// a label value, within the bounds. It is called before any call is
// observed (the daemon wires it), once.
func (m *Metrics) LabelOnly(known Known) { m.labels.known = known }

// Handler serves the metrics page in Prometheus's text format.
func (m *Metrics) Handler() http.Handler { return m.reg.Handler() }

// The observer side: relay.Observer and upstream.Observer.

func (m *Metrics) callStarted(c relay.CallInfo) {
	// The tool's label is decided as the call starts, while its server's
	// listing is there (a crash ending the call ends the listing too).
	server, _ := m.labels.call(c.Server, c.Tool, false)
	m.inFlight.With(server).Inc()
}

func (m *Metrics) jobStarted() { m.jobsInFlight.Inc() }

func (m *Metrics) jobEnded(status string) {
	m.jobsInFlight.Dec()
	m.jobs.With(status).Inc()
}

func (m *Metrics) callEnded(c relay.CallInfo, outcome relay.Outcome, took time.Duration, err error) {
	server, tool := m.labels.call(c.Server, c.Tool, outcome == relay.OutcomeOK)
	m.inFlight.With(server).Dec()
	m.calls.With(server, tool, string(outcome)).Inc()
	m.latency.With(server, tool).Observe(took.Seconds())
	if cause, ok := relay.CauseOf(err); ok {
		m.cancels.With(server, causeName(cause)).Inc()
	}
}

func (m *Metrics) progressAdvanced(c relay.CallInfo) {
	m.progress.With(m.labels.server(c.Server)).Inc()
}

func (m *Metrics) queueWaited(server string, waited time.Duration, admitted bool) {
	server = m.labels.server(server)
	m.queueWaits.With(server, strconv.FormatBool(admitted)).Inc()
	m.queueLatency.With(server).Observe(waited.Seconds())
}

func (m *Metrics) upstreamStarted(server string, restart bool) {
	server = m.labels.pooled(server)
	m.starts.With(server).Inc()
	if restart {
		m.restarts.With(server).Inc()
	}
}

func (m *Metrics) upstreamStartFailed(server string) {
	m.startFails.With(m.labels.pooled(server)).Inc()
}

func (m *Metrics) upstreamCrashed(server string) {
	m.crashes.With(m.labels.pooled(server)).Inc()
}

// causeName is a cause's label: its kind, or "cancelled" for one with
// none.
func causeName(c *relay.Cause) string {
	if s := c.Kind.String(); s != "" {
		return s
	}
	return "cancelled"
}

// registerState adds the gauges read from the daemon's state at each
// scrape, as mcpx status reads it: hosts connected, upstreams ready, the
// job leases. The status is read once a scrape.
func registerState(r *promtext.Registry, status func() apitype.Status) {
	var st apitype.Status
	r.OnScrape(func() {
		st = apitype.Status{}
		if status != nil {
			st = status()
		}
	})
	r.GaugeFunc("mcpx_hosts_connected", "Hosts connected, by transport (stdio: host streams through mcpx serve; http: open legacy HTTP sessions).", []string{"transport"}, func(emit promtext.Emit) {
		if status != nil {
			emit(float64(st.Hosts), "stdio")
			emit(float64(st.HTTPSessions), "http")
		}
	})
	r.GaugeFunc("mcpx_upstream_up", "1 when the upstream server has a live session, else 0, by server.", []string{"server"}, func(emit promtext.Emit) {
		for _, u := range st.Upstreams {
			emit(b2f(u.State == "ready"), u.Name)
		}
	})
	r.GaugeFunc("mcpx_job_leases_lost", "1 when the job store has not answered a renewal of this daemon's job leases for a lease term less a sixth (with a shared store, another replica may take its jobs), else 0.", nil, func(emit promtext.Emit) {
		if l := st.JobLeases; l != nil {
			emit(b2f(l.Lost))
		}
	})
	r.GaugeFunc("mcpx_job_store_clock_skew_seconds", "How far this daemon's clock is ahead of the shared job store's (behind if negative), at the last lease renewal.", nil, func(emit promtext.Emit) {
		if l := st.JobLeases; l != nil {
			emit(float64(l.SkewMs) / 1000)
		}
	})
	r.GaugeFunc("mcpx_job_store_file_lost", "1 when the job store's file was removed, replaced, truncated or overwritten while mcpx ran (its last write was refused for it: restart mcpx), else 0.", nil, func(emit promtext.Emit) {
		if l := st.JobLeases; l != nil {
			emit(b2f(l.FileLost))
		}
	})
	auditCounter := func(name, help string, read func(a *apitype.AuditStats) float64) {
		r.CounterFunc(name, help, nil, func(emit promtext.Emit) {
			if a := st.Audit; a != nil {
				emit(read(a))
			}
		})
	}
	auditCounter("mcpx_audit_records_written_total", "Audit records the writer is done with.", func(a *apitype.AuditStats) float64 { return float64(a.Written) })
	auditCounter("mcpx_audit_records_lost_total", "Audit records dropped: failing open, a full queue, or left unwritten at a stop.", func(a *apitype.AuditStats) float64 { return float64(a.Lost) })
	auditCounter("mcpx_audit_write_failures_total", "Failed writes of the audit log to one of its sinks.", func(a *apitype.AuditStats) float64 { return float64(a.Failures) })
	r.GaugeFunc("mcpx_audit_failing", "1 while the audit log cannot be written (failing closed, no tool call is admitted meanwhile), else 0.", nil, func(emit promtext.Emit) {
		if a := st.Audit; a != nil {
			emit(b2f(a.Failing))
		}
	})
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
