package promtext

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// What a relayed call costs the metrics: a counter and a histogram of
// (server, tool) found by their label values and updated, with
// Prometheus's client beside for reference.

var benchBuckets = []float64{0.005, 0.025, 0.1, 0.5, 1, 5, 30, 120, 600, 3600}

func BenchmarkObserve(b *testing.B) {
	r := NewRegistry()
	c := r.Counter("c_total", "C.", "server", "tool", "outcome")
	h := r.Histogram("h_seconds", "H.", benchBuckets, "server", "tool")
	b.ReportAllocs()
	for b.Loop() {
		c.With("demo", "export", "ok").Inc()
		h.With("demo", "export").Observe(0.042)
	}
}

func BenchmarkObserveParallel(b *testing.B) {
	r := NewRegistry()
	c := r.Counter("c_total", "C.", "server", "tool", "outcome")
	h := r.Histogram("h_seconds", "H.", benchBuckets, "server", "tool")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.With("demo", "export", "ok").Inc()
			h.With("demo", "export").Observe(0.042)
		}
	})
}

func BenchmarkObserveClient(b *testing.B) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c_total", Help: "C."}, []string{"server", "tool", "outcome"})
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "h_seconds", Help: "H.", Buckets: benchBuckets}, []string{"server", "tool"})
	b.ReportAllocs()
	for b.Loop() {
		c.WithLabelValues("demo", "export", "ok").Inc()
		h.WithLabelValues("demo", "export").Observe(0.042)
	}
}

func BenchmarkObserveClientParallel(b *testing.B) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c_total", Help: "C."}, []string{"server", "tool", "outcome"})
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "h_seconds", Help: "H.", Buckets: benchBuckets}, []string{"server", "tool"})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.WithLabelValues("demo", "export", "ok").Inc()
			h.WithLabelValues("demo", "export").Observe(0.042)
		}
	})
}

// BenchmarkScrape is one page of the daemon's size: 50 series of calls
// and of latency, and the runtime's and the process's families.
func BenchmarkScrape(b *testing.B) {
	r := NewRegistry()
	c := r.Counter("c_total", "C.", "server", "tool", "outcome")
	h := r.Histogram("h_seconds", "H.", benchBuckets, "server", "tool")
	RegisterGo(r)
	RegisterProcess(r)
	for i := range 50 {
		tool := "t" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		c.With("demo", tool, "ok").Inc()
		h.With("demo", tool).Observe(0.1)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.WriteTo(discard{}); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
