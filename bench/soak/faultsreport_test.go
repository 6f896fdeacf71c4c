package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"mcpx/internal/demo"
)

// execution is one run of a job's call at a replica's upstream.
type execution struct {
	replica    int
	start, end time.Time // end: finished, cancelled, or its replica killed
	outcome    string    // result, error, cancelled, killed
}

// executions returns the tagged runs of the demo's wait and sleep_then
// at each replica's upstream, by tag, and how many runs had no tag.
func (s *soak) executions() (map[string][]execution, int) {
	out := map[string][]execution{}
	untagged := 0
	for i, r := range s.reps {
		type open struct {
			tag string
			k   int
		}
		byID := map[string]open{}
		for _, ev := range r.env.Records("demo") {
			at, _ := time.Parse(time.RFC3339Nano, ev.At)
			switch {
			case ev.Event == demo.EventRequest && (ev.Tool == "wait" || ev.Tool == "sleep_then"):
				var m struct {
					Tag string `json:"soak/tag"`
				}
				_ = json.Unmarshal(ev.Meta, &m)
				if m.Tag == "" {
					untagged++
					continue
				}
				out[m.Tag] = append(out[m.Tag], execution{replica: i, start: at})
				byID[string(ev.ID)] = open{m.Tag, len(out[m.Tag]) - 1}
			case ev.Event == demo.EventFinished:
				if o, ok := byID[string(ev.ID)]; ok {
					x := &out[o.tag][o.k]
					if x.end.IsZero() {
						x.end, x.outcome = at, ev.Outcome
					}
					delete(byID, string(ev.ID))
				}
			case ev.Event == demo.EventCancelled && ev.Known != nil && *ev.Known:
				if o, ok := byID[string(ev.RequestID)]; ok {
					x := &out[o.tag][o.k]
					if x.end.IsZero() {
						x.end, x.outcome = at, "cancelled"
					}
				}
			}
		}
		for _, xs := range out {
			for k := range xs {
				x := &xs[k]
				if x.replica != i || !x.end.IsZero() {
					continue
				}
				for _, kill := range r.kills {
					if kill.After(x.start) {
						x.end, x.outcome = kill, "killed"
						break
					}
				}
			}
		}
	}
	return out, untagged
}

// killedSoon reports whether replica i was killed within d after at.
func (s *soak) killedSoon(i int, at time.Time, d time.Duration) bool {
	for _, k := range s.reps[i].kills {
		if !k.Before(at) && k.Sub(at) < d {
			return true
		}
	}
	return false
}

// report checks the invariants and prints the table.
func (s *soak) report() {
	t := s.t
	xs, untagged := s.executions()
	acked := map[string]bool{}
	for _, j := range s.jobs {
		acked[j.tag] = true
	}
	unacked := 0
	for tag, runs := range xs {
		if !acked[tag] {
			unacked += len(runs)
		}
	}
	var completed, lateKept, interrupted, failed, unsettled, wrong, lost, ranTwice, overlaps, reruns int
	for _, j := range s.jobs {
		runs := xs[j.tag]
		sort.Slice(runs, func(a, b int) bool { return runs[a].start.Before(runs[b].start) })
		if j.tool == "wait" && len(runs) > 1 {
			ranTwice++
			t.Errorf("plain job %s (%s) ran %d times: %+v", j.id, j.tag, len(runs), runs)
		}
		if j.tool == "sleep_then" && len(runs) > 1 {
			reruns++
		}
		for a := range runs {
			for b := a + 1; b < len(runs); b++ {
				if runs[a].end.IsZero() || runs[b].start.Before(runs[a].end) {
					overlaps++
					t.Errorf("job %s (%s) ran twice at once: %+v", j.id, j.tag, runs)
				}
			}
		}
		// A result the upstream gave a replica that lived on is the
		// job's result or its late result.
		delivered := false
		for _, x := range runs {
			if x.outcome == demo.OutcomeResult && !s.killedSoon(x.replica, x.end, 2*soakLease) {
				// its replica lived on for two lease terms: time to write it
				delivered = true
			}
		}
		switch {
		case j.status == "":
			unsettled++
			t.Errorf("job %s (%s) has not ended", j.id, j.tag)
		case j.status == "completed" && j.text != j.want && !strings.HasPrefix(j.text, j.want):
			wrong++
			t.Errorf("job %s (%s) completed with %q", j.id, j.tag, j.text)
		case j.status == "completed":
			completed++
			if j.late {
				lateKept++
			}
		case j.late:
			lateKept++
			interrupted++
		case delivered:
			lost++
			t.Errorf("job %s (%s) %s, with no late result, though its call's result reached a live replica: %+v", j.id, j.tag, j.status, runs)
		case j.status == "failed":
			failed++
		default:
			interrupted++
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "| fault soak, %v | |\n|---|---|\n", *duration)
	fmt.Fprintf(&b, "| faults | %d partitions of replica A from PostgreSQL (%v each), %d kill -9 of replica B (started again %v later) |\n", s.partitions, 3*soakLease, s.kills, soakLease)
	fmt.Fprintf(&b, "| plain calls (echo) | %d made, %d answered |\n", s.calls, s.callsOK)
	fmt.Fprintf(&b, "| jobs acknowledged (task created) | %d (%d starts refused or unanswered) |\n", len(s.jobs), s.startFails)
	fmt.Fprintf(&b, "| jobs completed with their own result | %d |\n", completed)
	fmt.Fprintf(&b, "| jobs with a late result kept (an earlier attempt's end, after the job was taken) | %d |\n", lateKept)
	fmt.Fprintf(&b, "| jobs ended failed or interrupted (the call died with a killed replica, or was cut off with it; some keep a late result) | %d |\n", failed+interrupted)
	fmt.Fprintf(&b, "| idempotent jobs run again (once) | %d |\n", reruns)
	fmt.Fprintf(&b, "| **results lost** (reached a live replica, kept nowhere) | **%d** |\n", lost)
	fmt.Fprintf(&b, "| **plain jobs run twice** | **%d** |\n", ranTwice)
	fmt.Fprintf(&b, "| **two runs of one job at once** | **%d** |\n", overlaps)
	fmt.Fprintf(&b, "| jobs wrong or not ended | %d, %d |\n", wrong, unsettled)
	fmt.Fprintf(&b, "| upstream runs of starts never acknowledged (the replica killed mid-request), not counted | %d |\n", unacked)
	fmt.Fprintf(&b, "| upstream runs without a tag (not counted) | %d |\n", untagged)
	for k, n := range s.lost {
		fmt.Fprintf(&b, "| log: %s | %d |\n", k, n)
	}
	s.usageTable(&b)
	t.Log("\n" + b.String())
}
