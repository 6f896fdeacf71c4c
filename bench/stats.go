package main

import (
	"math"
	"slices"
	"time"
)

// percentile returns the p-th percentile (0-100) of ds, nearest rank;
// NaN-like -1 when ds is empty.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return -1
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// median returns the median of xs, or NaN when empty.
func median(xs []float64) float64 {
	var s []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return math.NaN()
	}
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// spread is (max-min)/median of xs, as a fraction; NaN when undefined.
func spread(xs []float64) float64 {
	var s []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) < 2 {
		return math.NaN()
	}
	m := median(s)
	if m == 0 {
		return math.NaN()
	}
	return (slices.Max(s) - slices.Min(s)) / math.Abs(m)
}

// us converts a duration to microseconds, NaN for a negative (missing) one.
func us(d time.Duration) float64 {
	if d < 0 {
		return math.NaN()
	}
	return float64(d) / float64(time.Microsecond)
}
