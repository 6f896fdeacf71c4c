package replicas

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestReplicasStatus: mcpx status shows the cluster. On a replica's
// machine with no daemon (mcpx serve --http), status --json reads it from
// the store: both replicas, each at its address, live, with the jobs each
// runs (as many as its upstream got); the text form lists them and exits
// 3 (no daemon). A daemon whose config names the store joins the cluster
// and shows it in its own status, itself marked, and in the live view.
// Killed, a replica reads lapsed within a lease term, and the jobs it
// held go to the others.
func TestReplicasStatus(t *testing.T) {
	c := harness.StartCluster(t, "3s")
	var w struct{ IDs []string }
	c.Host(t, map[string]any{"mode": "start", "count": 4, "tool": "demo__wait", "tag": "w", "arguments": map[string]any{"seconds": 60}}, &w)
	for deadline := time.Now().Add(harness.WaitLong); ; time.Sleep(20 * time.Millisecond) {
		if n, _ := c.Executions("wait"); n == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the upstreams did not get the 4 calls")
		}
	}
	_, each := c.Executions("wait")
	e := c.Envs[0]
	clusterOf := func() (*apitype.Cluster, int) {
		t.Helper()
		out, stderr, code := e.Run(harness.WaitLong, "status", "--json", "--config", c.Cfgs[0])
		var st struct {
			Daemon  any
			Cluster *apitype.Cluster
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil || st.Cluster == nil || st.Daemon != nil {
			t.Fatalf("mcpx status --json with no daemon: exit %d %q %s", code, out, stderr)
		}
		return st.Cluster, code
	}
	byAddr := func(cl *apitype.Cluster) map[string]apitype.Replica {
		m := map[string]apitype.Replica{}
		for _, r := range cl.Replicas {
			m[r.Address] = r
		}
		return m
	}
	addr := func(i int) string {
		return strings.TrimSuffix(strings.TrimPrefix(c.Replicas[i].URL, "http://"), "/mcp")
	}
	var cl *apitype.Cluster
	for deadline := time.Now().Add(harness.WaitLong); ; time.Sleep(100 * time.Millisecond) {
		var code int
		cl, code = clusterOf()
		if code != 3 {
			t.Errorf("status with no daemon: exit %d, want 3", code)
		}
		rs := byAddr(cl)
		if len(cl.Replicas) == 2 && rs[addr(0)].Jobs == each[0] && rs[addr(1)].Jobs == each[1] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster in status: %+v, want both replicas running %v jobs", cl, each)
		}
	}
	for _, r := range cl.Replicas {
		if !r.Live || r.PID == 0 || r.Host == "" || time.Since(r.Seen) > 3*time.Second || !strings.HasPrefix(r.Owner, "mcpx-") ||
			(r.Jobs > 0 && r.LeaseUntil.Before(time.Now())) {
			t.Errorf("replica %+v", r)
		}
	}
	out, _, code := e.Run(harness.WaitLong, "status", "--config", c.Cfgs[0])
	if code != 3 || !strings.Contains(out, "daemon   not running") || !strings.Contains(out, "CLUSTER  2 replica(s) share the store, 2 live") ||
		!strings.Contains(out, cl.Replicas[0].Owner) || !strings.Contains(out, addr(1)) {
		t.Errorf("mcpx status with no daemon: exit %d\n%s", code, out)
	}

	// A daemon of the same config joins, and shows the cluster.
	e.StartHost(mcpxtest.Daemon, c.Cfgs[0]).Initialize("2025-11-25")
	harness.WaitStatus(t, e, c.Cfgs[0], "the daemon's status shows 3 replicas", func(st apitype.Status) bool {
		if st.Cluster == nil || len(st.Cluster.Replicas) != 3 {
			return false
		}
		for _, r := range st.Cluster.Replicas {
			if r.Owner == st.Cluster.Self {
				return r.PID == st.PID && r.Address == "" && r.Live
			}
		}
		return false
	})
	out, _, code = e.Run(harness.WaitLong, "status", "--config", c.Cfgs[0])
	if code != 0 || !strings.Contains(out, "CLUSTER  3 replica(s)") || !strings.Contains(out, "(this)") {
		t.Errorf("mcpx status of the daemon: exit %d\n%s", code, out)
	}
	if i := strings.Index(out, "CLUSTER"); i >= 0 {
		t.Logf("the daemon's mcpx status, its cluster:\n%s", out[i:])
	}
	t.Run("live view", func(t *testing.T) { liveViewCluster(t, e, c.Cfgs[0]) })

	// Replica B killed: lapsed within a lease term (3 s) of its last
	// heartbeat; its jobs go to the others (closed as interrupted).
	c.Replicas[1].Kill(t)
	killed := time.Now()
	var lapsedAfter time.Duration
	for deadline := time.Now().Add(harness.WaitLong); ; time.Sleep(100 * time.Millisecond) {
		cl = harness.DaemonStatus(t, e, c.Cfgs[0]).Cluster
		b, ok := byAddr(cl)[addr(1)]
		if ok && !b.Live && lapsedAfter == 0 {
			lapsedAfter = time.Since(killed)
		}
		if ok && !b.Live && b.Jobs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica B after its kill: %+v (found %v)", b, ok)
		}
	}
	t.Logf("jobs per replica %v; killed, B read lapsed %v later (lease 3 s), its jobs taken by then or after", each, lapsedAfter)
}

// liveViewCluster opens the daemon's live view in Chromium and waits for
// its cluster table to list the 3 replicas, one of them itself.
func liveViewCluster(t *testing.T, e *mcpxtest.Env, cfg string) {
	bctx := harness.Chromium(t)
	if err := chromedp.Do(bctx, chromedp.Navigate(harness.UiLink(t, e, cfg))); err != nil {
		t.Fatalf("opening the live view: %v", err)
	}
	harness.PollPage(t, bctx, "the cluster in the live view", `(() => {
		const rows = document.querySelectorAll("#replicas tbody tr[data-owner]");
		return !document.getElementById("cluster-section").hidden && rows.length === 3 &&
			[...rows].some(r => r.textContent.includes("(this)")) &&
			document.getElementById("cluster").textContent.startsWith("3 replica(s) share the store, 3 live");
	})()`)
}
