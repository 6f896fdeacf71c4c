package replicas

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// TestReplicaPartitioned: replica A reaches PostgreSQL through a proxy
// that black-holes its traffic (no reset: bytes just stop, as in a
// network partition) for three lease terms while replica B still reaches
// it. A runs two jobs of the demo's wait (not idempotent; one ends during
// the cut, one after it) and one of sleep_then (idempotent). A knows it
// lost its leases and says so once; it cancels the idempotent call, which
// B runs again only once A's has ended; neither wait runs twice, and the
// result each produced is not lost: B reads them interrupted, with the
// late result A recorded once the cut healed.
func TestReplicaPartitioned(t *testing.T) {
	harness.NginxBinary(t)
	pg := storetest.PostgresURL(t)
	tp := mcpxtest.StartToxiproxy(t)
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	proxied := *u
	proxied.Host = tp.Proxy("pg", u.Host)
	c := harness.StartClusterWith(t, harness.ClusterOpts{Pg: pg, Stores: []string{proxied.String(), pg}, Jobs: map[string]any{"leaseTerm": "3s"}})
	a := c.Replicas[0].URL
	var s1, s2, idem struct{ IDs []string }
	// Each start is a host process of its own, seconds apart: the long
	// calls first, so that they end after the cut and the short one in it.
	c.Host(t, map[string]any{"url": a, "mode": "start", "count": 1, "tool": "demo__wait", "tag": "long", "arguments": map[string]any{"seconds": 30}}, &s2)
	c.Host(t, map[string]any{"url": a, "mode": "start", "count": 1, "tool": "demo__sleep_then", "tag": "idem", "arguments": map[string]any{"seconds": 30}}, &idem)
	c.Host(t, map[string]any{"url": a, "mode": "start", "count": 1, "tool": "demo__wait", "tag": "short", "arguments": map[string]any{"seconds": 6}}, &s1)
	for deadline := time.Now().Add(harness.WaitLong); ; time.Sleep(20 * time.Millisecond) {
		if len(c.Runs(t, "wait")) == 2 && len(c.Runs(t, "sleep_then")) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica A's upstream did not get the three calls: wait %v, sleep_then %v", c.Runs(t, "wait"), c.Runs(t, "sleep_then"))
		}
	}
	cut := time.Now()
	for _, dir := range []bool{false, true} {
		tp.AddToxic("pg", map[bool]string{false: "cut-down", true: "cut-up"}[dir], "timeout", dir, map[string]any{"timeout": 0})
	}
	time.Sleep(9 * time.Second) // the partition itself: three lease terms
	tp.RemoveToxic("pg", "cut-down")
	tp.RemoveToxic("pg", "cut-up")
	healed := time.Now()

	// The wait calls run on at A; the store holds each one's end once A
	// has written it (the job's own, or its late end).
	st, err := store.OpenPostgres(t.Context(), pg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for deadline := time.Now().Add(harness.WaitLong); ; time.Sleep(100 * time.Millisecond) {
		n := 0
		for _, id := range []string{s1.IDs[0], s2.IDs[0], idem.IDs[0]} {
			if j, err := st.Get(t.Context(), "", id); err == nil && (j.Status == store.Completed || j.Late != nil) {
				n++
			}
		}
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 jobs have their end after %v", n, harness.WaitLong)
		}
	}
	var r struct{ Jobs []replicaJob }
	c.Host(t, map[string]any{"mode": "poll", "ids": []string{s1.IDs[0], s2.IDs[0], idem.IDs[0]}}, &r)
	// Each wait job ran once, at A, to its end, and its result is kept:
	// as the job's result, or, once B interrupted it, as its late result.
	for i, want := range []string{"waited 6 seconds", "waited 30 seconds"} {
		j := r.Jobs[i]
		if !strings.Contains(j.Text, want) || (j.Status != "completed" && j.Status != "interrupted") {
			t.Errorf("wait job %s: %s %q, want its result %q kept", j.ID, j.Status, j.Text, want)
		}
	}
	waits := c.Runs(t, "wait")
	if len(waits) != 2 || waits[0].Replica != 0 || waits[1].Replica != 0 {
		t.Errorf("wait ran %d times (%+v), want twice, both at replica A: a job not marked idempotent ran again", len(waits), waits)
	}
	if j := r.Jobs[2]; j.Status != "completed" || j.Text != "idem-0" {
		t.Errorf("idempotent job %s: %s %q", j.ID, j.Status, j.Text)
	}
	// The idempotent call ran at most twice, and never twice at once.
	sleeps := c.Runs(t, "sleep_then")
	if len(sleeps) > 2 {
		t.Errorf("sleep_then ran %d times: %+v", len(sleeps), sleeps)
	}
	for i := range sleeps {
		for k := i + 1; k < len(sleeps); k++ {
			x, y := sleeps[i], sleeps[k]
			if x.Start.After(y.Start) {
				x, y = y, x
			}
			if x.End.IsZero() || !x.End.Before(y.Start) {
				t.Errorf("two executions of the idempotent call at once: replica %d's ran %v to %v, replica %d's started %v",
					x.Replica, x.Start.Format(time.TimeOnly+".000"), x.End.Format(time.TimeOnly+".000"), y.Replica, y.Start.Format(time.TimeOnly+".000"))
			}
		}
	}
	logs := c.Replicas[0].Logs.String()
	if n := strings.Count(logs, "lost its job leases"); n != 1 {
		t.Errorf("replica A said %d times that it lost its job leases, want once:\n%s", n, logs)
	}
	show := func(rs []harness.Run) string {
		var b strings.Builder
		for _, r := range rs {
			fmt.Fprintf(&b, " [replica %d: %+.1fs to %+.1fs, %s]", r.Replica, r.Start.Sub(cut).Seconds(), r.End.Sub(cut).Seconds(), r.Outcome)
		}
		return b.String()
	}
	t.Logf("cut for %v; relative to the cut: sleep_then%s; wait%s; jobs %+v", healed.Sub(cut).Round(time.Millisecond), show(sleeps), show(waits), r.Jobs)
}
