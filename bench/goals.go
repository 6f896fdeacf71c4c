package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// printGoals states where the project's goals stand.
func (rep *report) printGoals(w io.Writer, sums map[string]summary) {
	t := &table{head: []string{"goal", "measured", "met"}}
	yes := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "NO"
	}
	// Against the bare relay of the same host era: a legacy host's (mcpx
	// then speaks 2026-07-28 upstream, unless pinned) and a 2026 host's.
	for _, cmp := range []struct {
		relay string
		ids   []string
	}{
		{"relay", []string{"inproc", "inproc-legacy", "inproc-b", "daemon"}},
		{"relay26", []string{"inproc26", "inproc26-b", "daemon26"}},
		{"relay-se", []string{"inproc-se", "inproc-se-b"}},
	} {
		relay, haveRelay := sums[cmp.relay]
		for _, id := range cmp.ids {
			s, ok := sums[id]
			if !ok || !haveRelay {
				continue
			}
			r := s.add50x1 / relay.add50x1
			t.rows = append(t.rows, []string{
				fmt.Sprintf("%s: added p50 @1 ≤ 1.25× %s's (%s)", id, cmp.relay, fmtUS(relay.add50x1)),
				fmt.Sprintf("%s = %.2f× (p99 %s)", fmtUS(s.add50x1), r, fmtUS(s.p99x1)), yes(r <= 1.25)})
			rt := s.tput / relay.tput
			t.rows = append(t.rows, []string{
				fmt.Sprintf("%s: calls/s @%d ≥ 0.9× %s's (%.0f)", id, rep.cfg.inflight, cmp.relay, relay.tput),
				fmt.Sprintf("%.0f = %.2f×", s.tput, rt), yes(rt >= 0.9)})
		}
	}
	// Against the npm gateways: the same host transport and upstream.
	for _, cmp := range []struct {
		mcpx, npm []string
	}{
		{[]string{"serve-http", "serve-http26", "daemon-http", "daemon-http26"}, []string{"mcp-proxy", "mcp-proxy26", "supergateway"}},
		{[]string{"inproc-uphttp"}, []string{"supergateway-stdio"}},
	} {
		best, bestID := 0.0, ""
		for _, id := range cmp.npm {
			if s, ok := sums[id]; ok && !math.IsNaN(s.tput) && s.tput > best {
				best, bestID = s.tput, id
			}
		}
		if best == 0 {
			continue
		}
		for _, id := range cmp.mcpx {
			if s, ok := sums[id]; ok && !math.IsNaN(s.tput) {
				t.rows = append(t.rows, []string{
					fmt.Sprintf("%s: calls/s @%d well ahead of the best npm gateway (%s, %.0f)", id, rep.cfg.inflight, bestID, best),
					fmt.Sprintf("%.0f = %.2f×", s.tput, s.tput/best), yes(s.tput >= 2*best)})
			}
		}
	}
	for _, p := range rep.paths {
		if !strings.HasPrefix(p.id, "inproc") && !strings.HasPrefix(p.id, "daemon") && !strings.HasPrefix(p.id, "serve") {
			continue
		}
		s := sums[p.id]
		worst := s.cpu1
		if !math.IsNaN(s.cpuN) && (math.IsNaN(worst) || s.cpuN > worst) {
			worst = s.cpuN
		}
		if !math.IsNaN(worst) {
			t.rows = append(t.rows, []string{fmt.Sprintf("%s: CPU per call ≤ 300µs", p.id),
				fmt.Sprintf("%s @1, %s @%d", fmtUS(s.cpu1), fmtUS(s.cpuN), rep.cfg.inflight), yes(worst <= 300)})
		}
		if s.bursts > 0 {
			t.rows = append(t.rows, []string{fmt.Sprintf("%s: progress 100%% before the result, in order", p.id),
				fmt.Sprintf("%s, %d/%d in order", fmtPct(s.delivered), s.ordered, s.bursts), yes(s.delivered == 1 && s.ordered == s.bursts)})
		}
		if s.cancels+s.missed > 0 {
			// The limit is the transport's the cancellation crosses: HTTP
			// if either hop is (an HTTP upstream's cancel is the closing of
			// its request's stream, or a POST).
			limit, face := 2000.0, "stdio"
			switch p.group {
			case groupHTTP:
				limit, face = 5000, "HTTP"
			case groupStdioHTTP:
				limit, face = 5000, "HTTP upstream"
			}
			t.rows = append(t.rows, []string{fmt.Sprintf("%s: cancel p99 ≤ %s (%s)", p.id, fmtUS(limit), face),
				fmt.Sprintf("%s (p50 %s, max %s of %d, %d never)", fmtUS(s.c99), fmtUS(s.c50), fmtUS(s.cMax), s.cancels, s.missed), yes(s.missed == 0 && s.c99 <= limit)})
		}
	}
	if m := rep.mem; m != nil && len(m.errs) == 0 {
		perHost, perCall := m.hosts.perItem(), m.calls.perItem()
		t.rows = append(t.rows,
			[]string{"daemon RSS idle ≤ 20 MB", fmtMB(m.idle.RSS), yes(m.idle.RSS <= 20<<20)},
			[]string{"daemon RSS per idle host ≤ 64 KB", fmt.Sprintf("%.1f KB", perHost/1024), yes(perHost <= 64<<10)},
			[]string{"daemon RSS per call in flight ≤ 16 KB", fmt.Sprintf("%.1f KB", perCall/1024), yes(perCall <= 16<<10)})
	}
	fmt.Fprintln(w, "Goals:")
	t.print(w, rep.cfg.markdown)
}
