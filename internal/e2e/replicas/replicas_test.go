package replicas

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

type replicaJob struct {
	I      int    `json:"i"`
	ID     string `json:"id"`
	Status string `json:"status"`
	Text   string `json:"text"`
	Polls  int    `json:"polls"`
}

// TestReplicasJobs: a 2026-07-28 host (TypeScript SDK v2) starts 200
// background jobs through nginx, round-robin over two replicas sharing
// PostgreSQL, and polls each until it ends, each request landing on
// whichever replica nginx picks. Every job completes with its own text,
// and the upstreams together ran the tool 200 times: each job once.
func TestReplicasJobs(t *testing.T) {
	c := harness.StartCluster(t, "5s")
	const n = 200
	var r struct{ Jobs []replicaJob }
	started := time.Now()
	c.Host(t, map[string]any{"mode": "jobs", "count": n, "seconds": 0.5, "parallel": 20}, &r)
	took := time.Since(started)
	if len(r.Jobs) != n {
		t.Fatalf("%d jobs reported, want %d", len(r.Jobs), n)
	}
	polls := 0
	for _, j := range r.Jobs {
		if j.Status != "completed" || j.Text != fmt.Sprint("job-", j.I) {
			t.Errorf("job %d (%s): %s %q", j.I, j.ID, j.Status, j.Text)
		}
		polls += j.Polls
	}
	total, each := c.Executions("sleep_then")
	if total != n {
		t.Errorf("the upstreams ran the tool %d times (%v per replica), want %d", total, each, n)
	}
	if slices.Contains(each, 0) {
		t.Errorf("a replica ran no job (%v): the balancer did not spread them", each)
	}
	t.Logf("%d jobs through nginx in %v, %d mcpx_job polls; executions per replica %v", n, took, polls, each)
}

// TestReplicasCancel: a host starts a job through nginx and, once it runs
// upstream, cancels it on replica B's own endpoint; the upstream that runs
// it sees the cancel, whichever replica that is. The time from the host's
// cancel to the upstream's record of it is logged, for cancels that
// crossed replicas (the job ran on A) and the others.
func TestReplicasCancel(t *testing.T) {
	t.Parallel()
	c := harness.StartCluster(t, "5s")
	const n = 30
	var r struct {
		Cancels []struct {
			ID     string `json:"id"`
			At     int64  `json:"at"`
			Status string `json:"status"`
		}
	}
	c.Host(t, map[string]any{"mode": "cancel", "count": n, "cancelUrl": c.Replicas[1].URL}, &r)
	type seen struct {
		at      time.Time
		replica int
	}
	// mcpx_job_cancel answers once the cancel is decided; the upstream
	// hears it a moment later (across replicas, by the store's NOTIFY).
	var got []seen
	for deadline := time.Now().Add(harness.WaitLong); ; time.Sleep(50 * time.Millisecond) {
		got = got[:0]
		for i, e := range c.Envs {
			for _, ev := range e.Records("demo") {
				if ev.Event != demo.EventCancelled || ev.Known == nil || !*ev.Known {
					continue
				}
				at, err := time.Parse(time.RFC3339Nano, ev.At)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, seen{at, i})
				if !strings.Contains(ev.Reason, "mcpx_job_cancel") {
					t.Fatalf("the upstream's cancel reason %q does not name mcpx_job_cancel", ev.Reason)
				}
			}
		}
		if len(got) >= n || time.Now().After(deadline) {
			break
		}
	}
	if len(r.Cancels) != n || len(got) != n {
		t.Fatalf("%d cancels sent, %d seen by the upstreams, want %d", len(r.Cancels), len(got), n)
	}
	slices.SortFunc(got, func(a, b seen) int { return a.at.Compare(b.at) })
	var cross, local []time.Duration
	for i, cn := range r.Cancels {
		if cn.Status != "cancelled" {
			t.Errorf("cancel of %s: %s", cn.ID, cn.Status)
		}
		d := got[i].at.Sub(time.UnixMilli(cn.At))
		if got[i].replica == 0 {
			cross = append(cross, d)
		} else {
			local = append(local, d)
		}
	}
	if len(cross) == 0 {
		t.Fatal("no job ran on replica A: no cancel crossed replicas")
	}
	t.Logf("host's cancel on B to the upstream's record: across replicas %s; on B itself %s", pct(cross), pct(local))
}

// pct formats p50 and p99 of ds.
func pct(ds []time.Duration) string {
	if len(ds) == 0 {
		return "(none)"
	}
	slices.Sort(ds)
	return fmt.Sprintf("p50 %v, p99 %v (n=%d, ms resolution on the host's side)", ds[len(ds)/2], ds[(len(ds)*99)/100], len(ds))
}

// TestReplicaKilled: jobs run on both replicas; replica A is killed with
// SIGKILL mid-job. Through nginx (which sends A's share to B), the host
// polls every job: within the lease, A's jobs of a tool not annotated
// idempotent read interrupted and never run again; A's jobs of the
// idempotent sleep_then run again once on B and complete; B's complete.
func TestReplicaKilled(t *testing.T) {
	c := harness.StartCluster(t, "2s")
	w, s := c.StartWaits(t, 6, 6, "idem")
	_, waits := c.Executions("wait")
	_, sleeps := c.Executions("sleep_then")
	if waits[0] == 0 || sleeps[0] == 0 {
		t.Fatalf("replica A runs no job to lose (wait %v, sleep_then %v)", waits, sleeps)
	}
	c.Replicas[0].Kill(t)
	killed := time.Now()
	var r struct{ Jobs []replicaJob }
	c.Host(t, map[string]any{"mode": "poll", "ids": append(w, s...)}, &r)
	took := time.Since(killed)
	interrupted := 0
	for i, j := range r.Jobs {
		switch {
		case i < 6 && j.Status == "interrupted":
			interrupted++
		case i < 6 && j.Status == "completed":
		case i >= 6 && j.Status == "completed" && strings.HasPrefix(j.Text, "idem-"):
		default:
			t.Errorf("job %s: %s %q", j.ID, j.Status, j.Text)
		}
	}
	if interrupted != waits[0] {
		t.Errorf("%d wait jobs interrupted, want replica A's %d", interrupted, waits[0])
	}
	if nw, each := c.Executions("wait"); nw != 6 {
		t.Errorf("wait ran %d times (%v), want 6: a job not marked idempotent ran again", nw, each)
	}
	if ns, each := c.Executions("sleep_then"); ns != 6+sleeps[0] {
		t.Errorf("sleep_then ran %d times (%v), want %d: each of A's %d once more", ns, each, 6+sleeps[0], sleeps[0])
	}
	t.Logf("killed replica A with %d wait and %d sleep_then jobs; every job had ended %v later (lease 2s, tools 6s)", waits[0], sleeps[0], took)
}

// TestReplicasStoreRestart: PostgreSQL stops while both replicas run
// jobs, which end while it is down. Meanwhile a call that needs no store
// works, and one that does (mcpx_job) fails saying the store is
// unavailable. Once it is back, every job reads completed with its result,
// and each ran once. The outage (the host processes it runs take seconds)
// is shorter than the lease, the default 30 s: a longer one is, to each
// replica, a partition of its own (TestReplicaPartitioned), and its
// idempotent calls would end and run again.
func TestReplicasStoreRestart(t *testing.T) {
	harness.NginxBinary(t)
	pg, dir := ownPostgres(t)
	c := harness.StartClusterOn(t, pg, "30s")
	w, s := c.StartWaits(t, 3, 3, "s")
	postgresCtl(t, "pause", dir)
	var echo, job struct {
		Result struct {
			Text    string
			IsError bool
		}
	}
	c.Host(t, map[string]any{"mode": "call", "tool": "demo__echo", "arguments": map[string]any{"x": 1}}, &echo)
	if echo.Result.IsError || !strings.Contains(echo.Result.Text, `"x"`) {
		t.Errorf("echo while the store is down: %+v", echo.Result)
	}
	c.Host(t, map[string]any{"mode": "call", "tool": "mcpx_job", "arguments": map[string]any{"job_id": w[0]}}, &job)
	if !job.Result.IsError || !strings.Contains(job.Result.Text, "unavailable") {
		t.Errorf("mcpx_job while the store is down: %+v, want an error saying the store is unavailable", job.Result)
	}
	// Every job's call ends while the store is down.
	for deadline := time.Now().Add(harness.WaitLong); ; time.Sleep(20 * time.Millisecond) {
		n := 0
		for _, e := range c.Envs {
			for _, ev := range e.Records("demo") {
				if ev.Event == demo.EventFinished && (ev.Tool == "wait" || ev.Tool == "sleep_then") {
					n++
				}
			}
		}
		if n == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 6 calls finished upstream", n)
		}
	}
	postgresCtl(t, "resume", dir)
	var r struct{ Jobs []replicaJob }
	c.Host(t, map[string]any{"mode": "poll", "ids": append(w, s...)}, &r)
	for i, j := range r.Jobs {
		if j.Status != "completed" || (i >= 3 && !strings.HasPrefix(j.Text, "s-")) {
			t.Errorf("job %s after the restart: %s %q", j.ID, j.Status, j.Text)
		}
	}
	if nw, each := c.Executions("wait"); nw != 3 {
		t.Errorf("wait ran %d times (%v), want 3", nw, each)
	}
	if ns, each := c.Executions("sleep_then"); ns != 3 {
		t.Errorf("sleep_then ran %d times (%v), want 3", ns, each)
	}
	t.Logf("mcpx_job while the store was down: %q", job.Result.Text)
}

// TestDaemonUsesConfigStore: the shared daemon whose config names a
// PostgreSQL store keeps its jobs there: a background job started through
// it is a row of that database, with its result once done.
func TestDaemonUsesConfigStore(t *testing.T) {
	pg := storetest.PostgresURL(t)
	e := mcpxtest.NewEnv(t)
	h := e.StartHost(mcpxtest.Daemon, e.WriteConfig(map[string]any{"store": pg}, mcpxtest.Demo{Name: "demo"}))
	h.Initialize("2025-11-25")
	call := map[string]any{"name": "mcpx_call", "arguments": map[string]any{
		"name": "demo__sleep_then", "arguments": map[string]any{"seconds": 0.2, "text": "in postgres"}, "background": true}}
	id := harness.JobOf(t, h.Result(h.Request("tools/call", call), harness.RelayWait)).JobID
	res := h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": id, "wait_seconds": 20}}), harness.RelayWait)
	if harness.FirstText(t, res) != "in postgres" {
		t.Fatalf("mcpx_job: %s", res)
	}
	st, err := store.OpenPostgres(t.Context(), pg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	j, err := st.Get(t.Context(), "", id)
	if err != nil || j.Status != store.Completed || !strings.Contains(string(j.Result), "in postgres") {
		t.Fatalf("the job's row in PostgreSQL: %+v, %v", j, err)
	}
	// No sign-in key is named, and no server needs one: that is no error.
	logs, _ := filepath.Glob(filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "daemon-*.log"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		if strings.Contains(string(b), `"level":"ERROR"`) {
			t.Errorf("the daemon logged an error:\n%s", b)
		}
	}
}
