package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// report turns the rounds into tables.
type report struct {
	cfg     config
	paths   []*path
	results map[string][]*round
	mems    map[string]memory
	mem     *memResult
	took    time.Duration
	machine string
}

// summary is one path's figures over every round: medians, and ratios to
// its direct path taken round by round.
type summary struct {
	p50x1, p99x1, p50xN, p99xN float64 // µs
	r50x1, r99x1, r50xN, r99xN float64 // ratios to the base
	add50x1, add99x1           float64 // µs over the base
	tput, rtput                float64
	spread50x1, spreadTput     float64
	cpu1, cpuN                 float64 // µs per call
	hostN, upN                 float64 // µs per call at N in flight: the bench host's, the upstream's
	delivered, minDelivered    float64 // share of progress before the result: mean and worst burst
	ordered, bursts, late      int
	burst, addBurst            float64 // µs: request to result, and over the base
	c50, c99, cMax             float64 // µs
	cancels, missed            int
	rss, peak                  int64
}

func (rep *report) summarize(p *path) summary {
	rs := rep.results[p.id]
	base := rep.results[p.base]
	var s summary
	per := func(f func(*round) float64) []float64 {
		out := make([]float64, len(rs))
		for i, r := range rs {
			out[i] = f(r)
		}
		return out
	}
	ratio := func(f func(*round) float64) float64 {
		var xs []float64
		for i, r := range rs {
			if i < len(base) {
				xs = append(xs, f(r)/f(base[i]))
			}
		}
		return median(xs)
	}
	diff := func(f func(*round) float64) float64 {
		var xs []float64
		for i, r := range rs {
			if i < len(base) {
				xs = append(xs, f(r)-f(base[i]))
			}
		}
		return median(xs)
	}
	p50x1 := func(r *round) float64 { return us(percentile(r.lat1, 50)) }
	p99x1 := func(r *round) float64 { return us(percentile(r.lat1, 99)) }
	p50xN := func(r *round) float64 { return us(percentile(r.lat32, 50)) }
	p99xN := func(r *round) float64 { return us(percentile(r.lat32, 99)) }
	tput := func(r *round) float64 {
		if r.tput == 0 {
			return math.NaN()
		}
		return r.tput
	}
	burst := func(r *round) float64 { return us(percentile(r.bursts, 50)) }

	s.p50x1, s.r50x1, s.add50x1 = median(per(p50x1)), ratio(p50x1), diff(p50x1)
	s.p99x1, s.r99x1, s.add99x1 = median(per(p99x1)), ratio(p99x1), diff(p99x1)
	s.p50xN, s.r50xN = median(per(p50xN)), ratio(p50xN)
	s.p99xN, s.r99xN = median(per(p99xN)), ratio(p99xN)
	s.tput, s.rtput = median(per(tput)), ratio(tput)
	s.spread50x1, s.spreadTput = spread(per(p50x1)), spread(per(tput))
	s.burst, s.addBurst = median(per(burst)), diff(burst)

	var cpu1, cpuN, hostN, upN time.Duration
	var n1, nN int
	var cancels []time.Duration
	var delivered float64
	s.minDelivered = math.NaN()
	for _, r := range rs {
		cpu1, cpuN, n1, nN = cpu1+r.cpu1, cpuN+r.cpu32, n1+r.calls1, nN+r.calls32
		hostN, upN = hostN+r.host32, upN+r.up32
		for i, d := range r.delivered {
			delivered += d
			if math.IsNaN(s.minDelivered) || d < s.minDelivered {
				s.minDelivered = d
			}
			if r.ordered[i] {
				s.ordered++
			}
			s.bursts++
		}
		s.late += r.late
		cancels = append(cancels, r.cancels...)
		s.missed += r.missed
	}
	s.cpu1, s.cpuN = math.NaN(), math.NaN()
	if len(p.gateway) > 0 && n1 > 0 {
		s.cpu1 = us(cpu1) / float64(n1)
	}
	if len(p.gateway) > 0 && nN > 0 {
		s.cpuN = us(cpuN) / float64(nN)
	}
	s.hostN, s.upN = math.NaN(), math.NaN()
	if nN > 0 {
		s.hostN = us(hostN) / float64(nN)
		if upN > 0 {
			s.upN = us(upN) / float64(nN)
		}
	}
	s.delivered = math.NaN()
	if s.bursts > 0 {
		s.delivered = delivered / float64(s.bursts)
	}
	s.cancels = len(cancels)
	s.c50, s.c99, s.cMax = us(percentile(cancels, 50)), us(percentile(cancels, 99)), us(percentile(cancels, 100))
	if m, ok := rep.mems[p.id]; ok {
		s.rss, s.peak = m.RSS, m.Peak
	}
	return s
}

// fmtUS prints microseconds compactly.
func fmtUS(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 10000:
		return fmt.Sprintf("%.1fms", v/1000)
	case math.Abs(v) >= 1000:
		return fmt.Sprintf("%.2fms", v/1000)
	default:
		return fmt.Sprintf("%.0fµs", v)
	}
}

func fmtRatio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return fmt.Sprintf(" ×%.2f", v)
}

func fmtRate(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}

func fmtPct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}

func fmtMB(b int64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
}

// table is rows of cells, printed aligned or as Markdown.
type table struct {
	head []string
	rows [][]string
}

func (t *table) print(w io.Writer, markdown bool) {
	if markdown {
		fmt.Fprintln(w, "| "+strings.Join(t.head, " | ")+" |")
		seps := make([]string, len(t.head))
		for i := range seps {
			seps[i] = "---"
			if i > 0 {
				seps[i] = "--:"
			}
		}
		fmt.Fprintln(w, "|"+strings.Join(seps, "|")+"|")
		for _, r := range t.rows {
			fmt.Fprintln(w, "| "+strings.Join(r, " | ")+" |")
		}
		return
	}
	width := make([]int, len(t.head))
	for _, r := range append([][]string{t.head}, t.rows...) {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(r []string) {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(t.head)
	for _, r := range t.rows {
		line(r)
	}
}

func (rep *report) print(w io.Writer) {
	md := rep.cfg.markdown
	fmt.Fprintf(w, "mcpx bench: %d round(s), %s; %s\n", rep.cfg.rounds, rep.took.Round(time.Second), rep.machine)
	fmt.Fprintf(w, "per round and path: %s at 1 in flight, %s at %d in flight, %d bursts of %d progress, %d cancels\n\n",
		rep.cfg.lat1, rep.cfg.latN, rep.cfg.inflight, rep.cfg.bursts, rep.cfg.burstSize, rep.cfg.cancels)
	n := fmt.Sprint(rep.cfg.inflight)
	t := &table{head: []string{"path", "p50@1", "p99@1", "added p50@1", "p50@" + n, "p99@" + n, "calls/s@" + n,
		"progress before result", "burst", "added", "cancel p50", "cancel p99", "CPU/call @1", "CPU/call @" + n, "RSS"}}
	sums := map[string]summary{}
	group := ""
	for _, p := range rep.paths {
		if p.group != group {
			group = p.group
			row := make([]string, len(t.head))
			row[0] = "— " + group
			if md {
				row[0] = "*" + group + "*"
			}
			t.rows = append(t.rows, row)
		}
		s := rep.summarize(p)
		sums[p.id] = s
		prog := "-"
		if s.bursts > 0 {
			prog = fmtPct(s.delivered)
			if s.minDelivered < s.delivered {
				prog += " (min " + fmtPct(s.minDelivered) + ")"
			}
			prog += fmt.Sprintf(", %d/%d in order", s.ordered, s.bursts)
			if s.late > 0 {
				prog += fmt.Sprintf(", %d late", s.late)
			}
		}
		c50, c99 := fmtUS(s.c50), fmtUS(s.c99)
		if s.missed > 0 {
			c99 = fmt.Sprintf("%s (%d/%d never)", c99, s.missed, s.missed+s.cancels)
			if s.cancels == 0 {
				c50, c99 = "never", fmt.Sprintf("never (%d/%d)", s.missed, s.missed)
			}
		}
		added := fmtUS(s.add50x1)
		addedBurst := fmtUS(s.addBurst)
		if p.base == p.id {
			added, addedBurst = "", ""
		}
		t.rows = append(t.rows, []string{
			p.label,
			fmtUS(s.p50x1) + fmtRatio(s.r50x1), fmtUS(s.p99x1) + fmtRatio(s.r99x1), added,
			fmtUS(s.p50xN) + fmtRatio(s.r50xN), fmtUS(s.p99xN) + fmtRatio(s.r99xN),
			fmtRate(s.tput) + fmtRatio(s.rtput),
			prog, fmtUS(s.burst), addedBurst, c50, c99,
			fmtUS(s.cpu1), fmtUS(s.cpuN), fmtMB(s.rss),
		})
	}
	t.print(w, md)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Ratios (×) are to the direct path of the same host transport and era, round by round, then the median;")
	fmt.Fprintln(w, "latencies are per-round percentiles, median over rounds; cancel percentiles pool every round.")
	fmt.Fprintln(w, "CPU/call is the gateway processes' utime+stime over the timed calls; RSS is theirs at the end of the rounds.")
	for _, p := range rep.paths {
		if p.note != "" {
			fmt.Fprintf(w, "%s: %s\n", p.label, p.note)
		}
	}

	// Spread.
	fmt.Fprintln(w)
	st := &table{head: []string{"spread over rounds (max-min)/median", "p50@1", "calls/s@" + n}}
	for _, p := range rep.paths {
		s := sums[p.id]
		st.rows = append(st.rows, []string{p.label, fmtPct(s.spread50x1), fmtPct(s.spreadTput)})
	}
	st.print(w, md)

	// Where the CPU went at N in flight, when the machine is busiest.
	fmt.Fprintln(w)
	ct := &table{head: []string{"CPU per call @" + n + ", by process", "host (bench)", "gateway", "upstream", "all"}}
	for _, p := range rep.paths {
		s := sums[p.id]
		if math.IsNaN(s.hostN) {
			continue
		}
		all := s.hostN
		for _, v := range []float64{s.cpuN, s.upN} {
			if !math.IsNaN(v) {
				all += v
			}
		}
		ct.rows = append(ct.rows, []string{p.label, fmtUS(s.hostN), fmtUS(s.cpuN), fmtUS(s.upN), fmtUS(all)})
	}
	ct.print(w, md)
	fmt.Fprintln(w, "The host is the bench process itself; the upstream is the demo fixture behind the path (for the")
	fmt.Fprintln(w, "daemon paths, the daemon's one, shared by them). /proc counts in ticks of 10 ms: read these as ±1 µs.")

	rep.printJobs(w)
	if rep.mem != nil {
		fmt.Fprintln(w)
		rep.printMem(w)
	}
	fmt.Fprintln(w)
	rep.printGoals(w, sums)
}

func (rep *report) printMem(w io.Writer) {
	m := rep.mem
	if len(m.errs) > 0 {
		fmt.Fprintf(w, "daemon memory: failed: %s\n", strings.Join(m.errs, "; "))
		return
	}
	per := func(s memStep) string { return fmt.Sprintf("%.1f KB", s.perItem()/1024) }
	t := &table{head: []string{"mcpx daemon (a fresh one per line, its own demo)", "RSS before", "RSS with", "per host or call"}}
	t.rows = [][]string{
		{"idle (a host came, made calls, left)", "", fmtMB(m.idle.RSS), ""},
		{fmt.Sprintf("%d idle stdio hosts (mcpx serve, initialized)", m.hosts.n), fmtMB(m.hosts.before.RSS), fmtMB(m.hosts.with.RSS), per(m.hosts)},
		{fmt.Sprintf("%d idle HTTP sessions (legacy, initialized)", m.http.n), fmtMB(m.http.before.RSS), fmtMB(m.http.with.RSS), per(m.http)},
		{fmt.Sprintf("%d calls in flight (one stdio host)", m.calls.n), fmtMB(m.calls.before.RSS), fmtMB(m.calls.with.RSS), per(m.calls)},
		{"peak (VmHWM, highest of the daemons)", "", fmtMB(m.peak), ""},
	}
	t.print(w, rep.cfg.markdown)
	if m.limits {
		fmt.Fprintf(w, "For the calls in flight, maxConcurrentCalls and maxCallsPerHost are raised to %d (defaults 64 and 256).\n", 2*m.calls.n)
	}
}

// machine describes where the bench ran.
func (b *bench) machine() string {
	var parts []string
	parts = append(parts, fmt.Sprintf("%d cores", runtime.NumCPU()))
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(data)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				parts[0] += " (" + strings.TrimSpace(v) + ")"
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(data)) {
			if k, v, ok := strings.Cut(line, ":"); ok && k == "MemTotal" {
				var kb int64
				fmt.Sscan(strings.TrimSpace(v), &kb)
				parts = append(parts, fmt.Sprintf("%.1f GB memory", float64(kb)/(1<<20)))
				break
			}
		}
	}
	parts = append(parts, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)
	if b.node != "" {
		if out, err := exec.Command(b.node, "--version").Output(); err == nil {
			parts = append(parts, "Node "+strings.TrimSpace(string(out)))
		}
	}
	if out, err := exec.Command(b.mcpx, "version").Output(); err == nil {
		parts = append(parts, strings.TrimSpace(string(out)))
	}
	if out, err := exec.Command("uname", "-r").Output(); err == nil {
		parts = append(parts, "Linux "+strings.TrimSpace(string(out)))
	}
	return strings.Join(slices.Clip(parts), ", ")
}

// failures counts what failed: round failures on every path, and the
// memory phase's.
func (rep *report) failures() int {
	n := 0
	for _, rs := range rep.results {
		for _, r := range rs {
			n += len(r.errs)
		}
	}
	if rep.mem != nil {
		n += len(rep.mem.errs)
	}
	return n
}
