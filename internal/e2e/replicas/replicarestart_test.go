package replicas

import (
	"fmt"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
)

// TestReplicasStoreRestarted: PostgreSQL is restarted under two replicas
// running jobs, once with pg_ctl's fast shutdown (connections ended,
// transactions rolled back) and once with its immediate one (no clean
// shutdown: crash recovery at start). Jobs started before the restart
// end after it, and jobs start after it: every one completes with its
// own result, and the upstreams ran each once. The lease is the default
// 30 s: a restart longer than a lease is a partition of every replica
// (see TestReplicaPartitioned).
func TestReplicasStoreRestarted(t *testing.T) {
	harness.NginxBinary(t)
	for _, mode := range []string{"fast", "immediate"} {
		t.Run(mode, func(t *testing.T) {
			pg, dir := ownPostgres(t)
			c := harness.StartClusterOn(t, pg, "30s")
			w, s := c.StartWaits(t, 3, 8, "s")
			started := time.Now()
			postgresCtl(t, "restart", dir, mode)
			took := time.Since(started)
			var after struct{ IDs []string }
			c.Host(t, map[string]any{"mode": "start", "count": 3, "tool": "demo__sleep_then", "tag": "after", "arguments": map[string]any{"seconds": 1}}, &after)
			var r struct{ Jobs []replicaJob }
			c.Host(t, map[string]any{"mode": "poll", "ids": append(append(w, s...), after.IDs...)}, &r)
			for i, j := range r.Jobs {
				want := "waited 8 seconds"
				switch {
				case i >= 6:
					want = fmt.Sprint("after-", i-6)
				case i >= 3:
					want = fmt.Sprint("s-", i-3)
				}
				if j.Status != "completed" || j.Text != want {
					t.Errorf("job %s: %s %q, want completed %q", j.ID, j.Status, j.Text, want)
				}
			}
			if nw, each := c.Executions("wait"); nw != 3 {
				t.Errorf("wait ran %d times (%v), want 3", nw, each)
			}
			if ns, each := c.Executions("sleep_then"); ns != 6 {
				t.Errorf("sleep_then ran %d times (%v), want 6", ns, each)
			}
			t.Logf("pg_ctl restart -m %s took %v; 9 jobs completed, each run once", mode, took.Round(time.Millisecond))
		})
	}
}
