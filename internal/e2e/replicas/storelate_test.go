package replicas

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store/storetest"
)

// TestReplicaStoreLate: replica A's PostgreSQL refuses its connections
// when A starts (a proxy in front of it, disabled) and answers later. A
// serves meanwhile and says once that it has no jobs yet (and once
// that its renewals fail, not at each); once the store answers it says
// so, and takes jobs: a job started at A runs there once
// and completes.
func TestReplicaStoreLate(t *testing.T) {
	harness.NginxBinary(t)
	pg := storetest.PostgresURL(t)
	tp := mcpxtest.StartToxiproxy(t)
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	proxied := *u
	proxied.Host = tp.Proxy("pg", u.Host)
	tp.SetEnabled("pg", false)
	c := harness.StartClusterWith(t, harness.ClusterOpts{Pg: pg, Stores: []string{proxied.String(), pg}, Jobs: map[string]any{"leaseTerm": "3s"}})
	a := c.Replicas[0]
	waitLog := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(harness.WaitLong); !strings.Contains(a.Logs.String(), what); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("replica A did not log %q:\n%s", what, a.Logs.String())
			}
		}
	}
	waitLog("no jobs")
	// The proxy refuses A for a few of its tries, then lets it through.
	// Time on purpose, not a wait for an event: what is under test is
	// that a store refused all along is reported once, not at each try
	// (nor at each failed renewal), so the refusal must outlast several;
	// A's tries, one second and then three after its first, are not
	// observable one by one (that is the point). The count it logs as
	// the store answers shows the stretch was long enough.
	time.Sleep(3 * time.Second)
	tp.SetEnabled("pg", true)
	waitLog("PostgreSQL answers now")
	tries := 0
	if m := regexp.MustCompile(`PostgreSQL answers now.* tries=(\d+)`).FindStringSubmatch(a.Logs.String()); m != nil {
		tries, _ = strconv.Atoi(m[1])
	}
	if tries < 3 {
		t.Fatalf("replica A's store answered at try %d, want two failed tries first:\n%s", tries, a.Logs.String())
	}

	var s struct{ IDs []string }
	c.Host(t, map[string]any{"url": a.URL, "mode": "start", "count": 1, "tool": "demo__wait", "tag": "late", "arguments": map[string]any{"seconds": 1}}, &s)
	var r struct{ Jobs []replicaJob }
	c.Host(t, map[string]any{"mode": "poll", "ids": s.IDs}, &r)
	if len(r.Jobs) != 1 || r.Jobs[0].Status != "completed" || !strings.Contains(r.Jobs[0].Text, "waited 1 second") {
		t.Fatalf("a job started at replica A once its store answered: %+v", r.Jobs)
	}
	waits := c.Runs(t, "wait")
	if len(waits) != 1 || waits[0].Replica != 0 {
		t.Errorf("wait ran %+v, want once at replica A", waits)
	}
	logs := a.Logs.String()
	if n := strings.Count(logs, "cannot be opened; trying again") + strings.Count(logs, "no jobs yet: opening"); n < 1 || n > 2 {
		t.Errorf("replica A said %d times that it has no store, want once per reason:\n%s", n, logs)
	}
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "job store") {
			t.Log("A: " + l)
		}
	}
	// The renewals fail for one reason all along: said once, not at
	// each; and no loss of leases it never held is timed.
	if n := strings.Count(logs, `msg="renewing job leases"`); n > 2 {
		t.Errorf("replica A warned of %d failed renewals, want one per reason", n)
	}
	if strings.Contains(logs, "lost for") {
		t.Errorf("replica A timed the loss of leases it never held:\n%s", logs)
	}
	if strings.Contains(logs, "not trying again") {
		t.Errorf("replica A gave up on its store:\n%s", logs)
	}
}
