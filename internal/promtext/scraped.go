package promtext

import (
	"bytes"
	"slices"
)

// Emit gives one series of a family read at a scrape: its value and its
// label values, in the order the labels were given to the registry.
type Emit func(v float64, labelValues ...string)

// scraped is a family whose series are read at each scrape.
type scraped struct {
	desc
	read func(emit Emit)
}

type point struct {
	k key
	v float64
}

func (s *scraped) write(b *bytes.Buffer) {
	var pts []point
	s.read(func(v float64, values ...string) {
		if len(values) != len(s.perm) {
			panic("promtext: " + s.fname + ": wrong number of label values")
		}
		p := point{v: v}
		for i, l := range values {
			p.k[s.perm[i]] = l
		}
		pts = append(pts, p)
	})
	if len(pts) == 0 {
		return
	}
	slices.SortStableFunc(pts, func(a, b point) int { return compareKeys(&a.k, &b.k) })
	s.header(b)
	for i := range pts {
		sample(b, s.fname, "", s.labels, &pts[i].k, "", 0, pts[i].v)
	}
}

// GaugeFunc registers a gauge family whose series read gives at each
// scrape (none: the family is left out of the page).
func (r *Registry) GaugeFunc(name, help string, labels []string, read func(emit Emit)) {
	r.register(&scraped{desc: newDesc(name, help, GaugeType, labels), read: read})
}

// CounterFunc registers a counter family whose series read gives at each
// scrape.
func (r *Registry) CounterFunc(name, help string, labels []string, read func(emit Emit)) {
	r.register(&scraped{desc: newDesc(name, help, CounterType, labels), read: read})
}

// summary is a family of one summary without labels, read at each
// scrape.
type summary struct {
	desc
	read func() (quantiles [][2]float64, sum float64, count uint64)
}

func (s *summary) write(b *bytes.Buffer) {
	qs, sum, count := s.read()
	s.header(b)
	var k key
	for _, q := range qs {
		sample(b, s.fname, "", nil, &k, "quantile", q[0], q[1])
	}
	sample(b, s.fname, "_sum", nil, &k, "", 0, sum)
	sample(b, s.fname, "_count", nil, &k, "", 0, float64(count))
}
