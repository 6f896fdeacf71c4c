// Package promtext keeps metrics and writes them in Prometheus's text
// exposition format (version 0.0.4), the format `promtool check metrics`
// lints: counters, gauges and histograms kept by the caller, gauges and
// counters read at each scrape, and the Go runtime's and the process's
// metrics under the names Prometheus's Go client gives them.
//
// The page is what that client writes for the same values, byte for
// byte: families sorted by name, each with its HELP and TYPE lines, its
// series sorted by their label values, label names sorted, numbers as
// Go's shortest 'g' form; a family with no series is left out.
//
// Concurrency: everything is safe for concurrent use. Updating a series
// takes no lock (an atomic load and a map lookup to find it, an atomic
// add to count); a scrape reads each value atomically, so it may see an
// observation in a histogram's sum that its buckets do not have yet,
// never the reverse.
package promtext

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

// A Registry holds families of metrics and writes them as one page.
type Registry struct {
	mu       sync.Mutex // serializes scrapes and registration
	fams     []family   // sorted by name
	onScrape []func()
}

// family is one metric name: its HELP and TYPE lines and its series.
type family interface {
	name() string
	// write appends the family's lines to b; nothing if it has no
	// series.
	write(b *bytes.Buffer)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// register adds f. Names are unique: a second family of a name is a bug
// of the caller, and panics.
func (r *Registry) register(f family) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i, found := slices.BinarySearchFunc(r.fams, f.name(), func(g family, n string) int { return strings.Compare(g.name(), n) })
	if found {
		panic(fmt.Sprintf("promtext: metric %q registered twice", f.name()))
	}
	r.fams = slices.Insert(r.fams, i, f)
}

// OnScrape adds fn to what runs at the start of each scrape, before any
// family is read (to take one snapshot several families read).
func (r *Registry) OnScrape(fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onScrape = append(r.onScrape, fn)
}

// WriteTo writes the page to w.
func (r *Registry) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	r.page(&b)
	return b.WriteTo(w)
}

func (r *Registry) page(b *bytes.Buffer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, fn := range r.onScrape {
		fn()
	}
	for _, f := range r.fams {
		f.write(b)
	}
}

// Type is a family's TYPE.
type Type string

// The types of families.
const (
	CounterType   Type = "counter"
	GaugeType     Type = "gauge"
	HistogramType Type = "histogram"
	SummaryType   Type = "summary"
)

// desc is what every family has: name, help, type, label names.
type desc struct {
	fname  string
	help   string
	typ    Type
	labels []string // sorted
	perm   []int    // perm[i]: where the caller's i-th label sits in labels
}

func newDesc(name, help string, typ Type, labels []string) desc {
	if len(labels) > maxLabels {
		panic(fmt.Sprintf("promtext: metric %q has %d labels, at most %d", name, len(labels), maxLabels))
	}
	sorted := slices.Sorted(slices.Values(labels))
	perm := make([]int, len(labels))
	for i, l := range labels {
		perm[i] = slices.Index(sorted, l)
	}
	return desc{fname: name, help: help, typ: typ, labels: sorted, perm: perm}
}

func (d *desc) name() string { return d.fname }

// header writes the HELP and TYPE lines.
func (d *desc) header(b *bytes.Buffer) {
	b.WriteString("# HELP ")
	b.WriteString(d.fname)
	b.WriteByte(' ')
	help(b, d.help)
	b.WriteString("\n# TYPE ")
	b.WriteString(d.fname)
	b.WriteByte(' ')
	b.WriteString(string(d.typ))
	b.WriteByte('\n')
}
