package main

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcpx/internal/mcpxtest"
)

// TestMain lets the test binary be the bench's bare relay too: the bench
// starts its relay as `<own executable> relay -- CMD...`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "relay" {
		os.Exit(runRelay(os.Args[2:]))
	}
	// Every process the bench starts inherits this: a race-built mcpx
	// would otherwise linger a second at each exit.
	os.Setenv("GORACE", mcpxtest.RaceQuickExit)
	mcpxtest.Main(m)
}

func TestPercentileIsNearestRank(t *testing.T) {
	ms := func(n int) []time.Duration {
		ds := make([]time.Duration, n)
		for i := range ds {
			ds[i] = time.Duration(n-i) * time.Millisecond // unsorted
		}
		return ds
	}
	for _, c := range []struct {
		n    int
		p    float64
		want time.Duration
	}{
		{90, 99, 90 * time.Millisecond}, // under 100 samples the p99 is the slowest
		{300, 99, 297 * time.Millisecond},
		{300, 50, 150 * time.Millisecond},
		{4, 50, 2 * time.Millisecond},
		{300, 100, 300 * time.Millisecond},
		{1, 99, time.Millisecond},
		{0, 99, -1},
	} {
		if got := percentile(ms(c.n), c.p); got != c.want {
			t.Errorf("percentile(1..%d ms, %v) = %v, want %v", c.n, c.p, got, c.want)
		}
	}
}

// TestEveryPath runs the whole bench once, briefly, on every path with a
// race-built mcpx, and checks what it measured rather than how fast: each
// path made its calls with no failure; through mcpx (and directly, and
// through the bare relay) every progress notification came before its
// result and in order, and every cancellation reached the upstream; the
// memory phase ran; the tables name every path. A cancellation counts
// only when the fixture matched it to the running request. It needs the
// npm gateways (npm ci --prefix test/interop), as scripts/test installs
// them.
func TestEveryPath(t *testing.T) {
	if testing.Short() {
		t.Skip("starts every path's processes")
	}
	const bursts, cancels, hosts, calls, bgJobs, promoted = 2, 5, 5, 40, 3, 1
	cfg, err := parseFlags([]string{
		"-rounds", "1", "-lat1", "100ms", "-latn", "300ms", "-inflight", "8",
		"-bursts", strconv.Itoa(bursts), "-burst-size", "50", "-cancels", strconv.Itoa(cancels), "-cancel-wait", "5s",
		"-mem-hosts", strconv.Itoa(hosts), "-mem-calls", strconv.Itoa(calls),
		"-jobs", strconv.Itoa(bgJobs), "-promoted", strconv.Itoa(promoted),
		"-mcpx", mcpxtest.Binary(t), "-node-modules", "../test/interop/node_modules",
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := measure(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, p := range rep.paths {
		ran = append(ran, p.id)
	}
	if !slices.Equal(ran, cfg.paths) {
		t.Fatalf("paths measured %v, want %v (are the npm gateways installed?)", ran, cfg.paths)
	}
	for _, p := range rep.paths {
		rs := rep.results[p.id]
		if len(rs) != 1 {
			t.Errorf("%s: %d rounds, want 1", p.id, len(rs))
			continue
		}
		r := rs[0]
		for _, e := range r.errs {
			t.Errorf("%s: %s", p.id, e)
		}
		if r.calls1 == 0 || r.calls32 == 0 || len(r.lat1) == 0 || len(r.lat32) == 0 || r.tput <= 0 {
			t.Errorf("%s: %d calls at 1 in flight, %d at 8, %.0f calls/s", p.id, r.calls1, r.calls32, r.tput)
		}
		if len(p.gateway) > 0 && r.cpu32 <= 0 {
			t.Errorf("%s: no gateway CPU counted", p.id)
		}
		if j := r.jobs; p.jobs && (j == nil || len(j.bgResult) != bgJobs || len(j.lag) != promoted) {
			t.Errorf("%s: the job figure measured %+v, want %d background jobs and %d promoted", p.id, j, bgJobs, promoted)
		} else if p.jobs {
			for _, d := range j.promoted {
				// The host had its job before its timer fired.
				if d >= jobHostTimer-jobPromoteAt {
					t.Errorf("%s: a call past the host's timer was answered %v after the promotion point, at or past the timer", p.id, d)
				}
			}
		}
		if p.everything || !(strings.Contains(p.label, "mcpx") || p.gateway == nil || strings.HasPrefix(p.id, "relay")) {
			continue // server-everything has no burst or record; npm gateways are measured, not judged
		}
		if len(r.delivered) != bursts {
			t.Errorf("%s: %d bursts, want %d", p.id, len(r.delivered), bursts)
		}
		for i, d := range r.delivered {
			if d != 1 || !r.ordered[i] {
				t.Errorf("%s: burst %d: %.0f%% before the result, in order %v", p.id, i, 100*d, r.ordered[i])
			}
		}
		if len(r.cancels) != cancels || r.missed != 0 {
			t.Errorf("%s: %d cancellations seen by the upstream, %d never, want %d", p.id, len(r.cancels), r.missed, cancels)
		}
	}
	if m := rep.mem; m == nil {
		t.Error("no memory phase")
	} else {
		for _, e := range m.errs {
			t.Errorf("memory: %s", e)
		}
		if m.hosts.n != hosts || m.calls.n != calls || m.idle.RSS <= 0 || m.calls.with.RSS <= 0 {
			t.Errorf("memory: %d hosts, %d calls, idle RSS %d, with calls %d", m.hosts.n, m.calls.n, m.idle.RSS, m.calls.with.RSS)
		}
	}
	var out bytes.Buffer
	rep.print(&out)
	for _, p := range rep.paths {
		if !strings.Contains(out.String(), p.label) {
			t.Errorf("the tables do not name %s (%q)", p.id, p.label)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("the bench printed:\n%s", out.String())
	}
}
