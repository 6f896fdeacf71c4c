package upstream

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// stderrFlood is half a million short lines and a last one.
var stderrFlood = []byte(strings.Repeat("flooding stderr\n", 500000) + "last words\n")

// TestStderrFloodCheap: past the logging rate, an upstream's stderr lines
// are counted a buffer at a time, not made into a string each: a flood
// costs far less than an allocation a line. The tail and the count stay
// right, and the log gets the rate's lines and one count of the rest.
func TestStderrFloodCheap(t *testing.T) {
	var logged bytes.Buffer
	var s *stderrLog
	allocs := testing.AllocsPerRun(1, func() {
		logged.Reset()
		s = newStderrLog("flood", slog.New(slog.NewTextHandler(&logged, nil)))
		s.run(bytes.NewReader(stderrFlood))
	})
	const lines = 500001
	if allocs > lines/10 {
		t.Errorf("%.0f allocations for %d lines: the flood is read a line at a time", allocs, lines)
	}
	if s.total != lines {
		t.Errorf("counted %d lines, want %d", s.total, lines)
	}
	if tail := s.lastLines(2); tail != "flooding stderr | last words" {
		t.Errorf("tail %q", tail)
	}
	if n := strings.Count(logged.String(), "msg=\"upstream stderr\""); n < logLinesPerS || n > 3*logLinesPerS {
		t.Errorf("%d lines logged, want about %d a second", n, logLinesPerS)
	}
	if !strings.Contains(logged.String(), "not logged (rate limit)") {
		t.Errorf("no count of the lines not logged:\n%s", logged.String())
	}
}

// BenchmarkStderrFlood: reading a flood of short stderr lines, per line.
func BenchmarkStderrFlood(b *testing.B) {
	log := slog.New(slog.DiscardHandler)
	b.SetBytes(int64(len(stderrFlood)))
	for b.Loop() {
		newStderrLog("flood", log).run(bytes.NewReader(stderrFlood))
	}
}
