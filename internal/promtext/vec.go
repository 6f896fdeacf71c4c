package promtext

import (
	"bytes"
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// maxLabels is the most labels a kept family has.
const maxLabels = 3

// key is a series' label values, in the order of the sorted label names.
// An array, not a joined string: looking a series up builds nothing on
// the heap (BenchmarkObserve: 0 allocs).
type key [maxLabels]string

// vec is the series of one kept family, S a Counter, Gauge or Histogram.
// Series are found without a lock: the map is copied on write (a new
// series is rare, the callers bound label values), and read with one
// atomic load; with atomic counts, a call's update takes about half the
// Prometheus client's time, alone or in parallel (BenchmarkObserve*).
type vec[S any] struct {
	desc
	series atomic.Pointer[map[key]*S]
	mu     sync.Mutex // serializes adding series
	make   func() *S
	// writeSeries writes one series' lines.
	writeSeries func(b *bytes.Buffer, d *desc, k *key, s *S)
}

// With returns the series of the label values, given in the order the
// labels were given to the registry, adding it the first time.
func (v *vec[S]) With(values ...string) *S {
	if len(values) != len(v.perm) {
		panic("promtext: " + v.fname + ": wrong number of label values")
	}
	var k key
	for i, s := range values {
		k[v.perm[i]] = s
	}
	if m := v.series.Load(); m != nil {
		if s, ok := (*m)[k]; ok {
			return s
		}
	}
	return v.add(k)
}

func (v *vec[S]) add(k key) *S {
	v.mu.Lock()
	defer v.mu.Unlock()
	old := v.series.Load()
	if old != nil {
		if s, ok := (*old)[k]; ok {
			return s
		}
	}
	m := make(map[key]*S, 1)
	if old != nil {
		m = maps.Clone(*old)
	}
	s := v.make()
	m[k] = s
	v.series.Store(&m)
	return s
}

func (v *vec[S]) write(b *bytes.Buffer) {
	m := v.series.Load()
	if m == nil || len(*m) == 0 {
		return
	}
	keys := slices.SortedFunc(maps.Keys(*m), func(a, b key) int { return compareKeys(&a, &b) })
	v.header(b)
	for i := range keys {
		v.writeSeries(b, &v.desc, &keys[i], (*m)[keys[i]])
	}
}

func compareKeys(a, b *key) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// A Counter counts up from 0.
type Counter struct{ n atomic.Uint64 }

// Inc adds one.
func (c *Counter) Inc() { c.n.Add(1) }

// Value is the count.
func (c *Counter) Value() uint64 { return c.n.Load() }

// CounterVec is a counter family.
type CounterVec struct{ vec[Counter] }

// Counter registers a counter family with the label names labels.
func (r *Registry) Counter(name, help string, labels ...string) *CounterVec {
	v := &CounterVec{}
	v.desc = newDesc(name, help, CounterType, labels)
	v.make = func() *Counter { return new(Counter) }
	v.writeSeries = func(b *bytes.Buffer, d *desc, k *key, c *Counter) {
		sample(b, d.fname, "", d.labels, k, "", 0, float64(c.Value()))
	}
	r.register(v)
	return v
}

// A Gauge is a count that goes up and down.
type Gauge struct{ n atomic.Int64 }

// Inc adds one.
func (g *Gauge) Inc() { g.n.Add(1) }

// Dec takes one away.
func (g *Gauge) Dec() { g.n.Add(-1) }

// Value is the gauge's value.
func (g *Gauge) Value() int64 { return g.n.Load() }

// GaugeVec is a gauge family kept by the caller.
type GaugeVec struct{ vec[Gauge] }

// Gauge registers a gauge family with the label names labels.
func (r *Registry) Gauge(name, help string, labels ...string) *GaugeVec {
	v := &GaugeVec{}
	v.desc = newDesc(name, help, GaugeType, labels)
	v.make = func() *Gauge { return new(Gauge) }
	v.writeSeries = func(b *bytes.Buffer, d *desc, k *key, g *Gauge) {
		sample(b, d.fname, "", d.labels, k, "", 0, float64(g.Value()))
	}
	r.register(v)
	return v
}

// A Histogram counts observations in buckets and sums them.
type Histogram struct {
	upper  []float64       // the buckets' upper bounds, shared by the family
	counts []atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	sum    atomic.Uint64   // math.Float64bits of the sum
}

// Observe adds v.
func (h *Histogram) Observe(v float64) {
	// The sum first: a scrape reads the buckets first, so its sum has
	// every observation its buckets have.
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			break
		}
	}
	i := 0
	for i < len(h.upper) && v > h.upper[i] {
		i++
	}
	h.counts[i].Add(1)
}

// HistogramVec is a histogram family.
type HistogramVec struct{ vec[Histogram] }

// Histogram registers a histogram family with the buckets' upper bounds
// buckets (increasing; +Inf is added) and the label names labels.
func (r *Registry) Histogram(name, help string, buckets []float64, labels ...string) *HistogramVec {
	if !slices.IsSorted(buckets) {
		panic("promtext: " + name + ": buckets out of order")
	}
	upper := slices.Clone(buckets)
	v := &HistogramVec{}
	v.desc = newDesc(name, help, HistogramType, labels)
	v.make = func() *Histogram {
		return &Histogram{upper: upper, counts: make([]atomic.Uint64, len(upper)+1)}
	}
	v.writeSeries = func(b *bytes.Buffer, d *desc, k *key, h *Histogram) {
		var cum uint64
		for i := range h.counts {
			cum += h.counts[i].Load()
			le := math.Inf(+1)
			if i < len(h.upper) {
				le = h.upper[i]
			}
			sample(b, d.fname, "_bucket", d.labels, k, "le", le, float64(cum))
		}
		sample(b, d.fname, "_sum", d.labels, k, "", 0, math.Float64frombits(h.sum.Load()))
		sample(b, d.fname, "_count", d.labels, k, "", 0, float64(cum))
	}
	r.register(v)
	return v
}
