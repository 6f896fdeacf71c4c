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

// TestStderrSummaryKeepsErrors: what a failing server's last stderr is
// reported as keeps the first lines that name the error, not only its
// last lines (npm's pointer to its log, Node's closing lines).
func TestStderrSummaryKeepsErrors(t *testing.T) {
	for _, tc := range []struct{ name, stderr, want string }{
		{"npx", "npm error code E404\nnpm error 404 Not Found - GET https://registry.example/@x%2fnope - Not found\nnpm error 404\nnpm error 404  '@x/nope@*' is not in this registry.\nnpm error A complete log of this run can be found in: /h/.npm/_logs/x.log\n",
			"npm error code E404 | npm error 404 Not Found - GET https://registry.example/@x%2fnope - Not found | … | npm error 404 | npm error 404  '@x/nope@*' is not in this registry. | npm error A complete log of this run can be found in: /h/.npm/_logs/x.log"},
		{"node", "node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module '/srv/index.js'\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)\n    at node:internal/main/run_main_module:28:49 {\n  code: 'MODULE_NOT_FOUND',\n  requireStack: []\n}\n\nNode.js v20.11.0\n",
			"Error: Cannot find module '/srv/index.js' | … |   requireStack: [] | } | Node.js v20.11.0"},
		{"no error words", "starting\nlistening on stdio\n", "starting | listening on stdio"},
		{"the error is last", "starting\nfatal: no config\n", "starting | fatal: no config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStderrLog("x", slog.New(slog.DiscardHandler))
			s.run(strings.NewReader(tc.stderr))
			if got := s.summary(3); got != tc.want {
				t.Errorf("summary:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
