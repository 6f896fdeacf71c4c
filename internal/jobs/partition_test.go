package jobs_test

import (
	"context"
	"encoding/json"
	"net/url"
	"sync"
	"testing"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// executions counts the runs of calls, by job, and sees two at once.
type executions struct {
	mu      sync.Mutex
	running map[string]int
	runs    map[string][]string // job id -> who ran it, in order
	began   map[string][]time.Time
	overlap []string // jobs that ran twice at once
}

// run runs job id as who until ctx ends or d has passed.
func (e *executions) run(ctx context.Context, who, id string, d time.Duration) (json.RawMessage, error) {
	e.mu.Lock()
	e.running[id]++
	e.runs[id] = append(e.runs[id], who)
	if e.began != nil {
		e.began[id] = append(e.began[id], time.Now())
	}
	if e.running[id] > 1 {
		e.overlap = append(e.overlap, id)
	}
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.running[id]--
		e.mu.Unlock()
	}()
	select {
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-time.After(d):
		return json.RawMessage(`{"content":[{"type":"text","text":"done by ` + who + `"}]}`), nil
	}
}

// running1 reports whether each of ids runs once now.
func (e *executions) running1(ids ...string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, id := range ids {
		if e.running[id] != 1 {
			return false
		}
	}
	return true
}

// partition runs replica A over a proxy to PostgreSQL, and B straight to
// it; A starts an idempotent and a non-idempotent job of 5 s, then its
// traffic to the store is black-holed (no reset) for more than three
// lease terms, then healed. It returns the executions and the jobs' rows
// once both have ended.
func partition(t *testing.T, unfenced bool) (*executions, *store.Job, *store.Job) {
	ex, ji, jp, _ := partitionLeases(t, unfenced)
	return ex, ji, jp
}

// partitionLeases is partition, with what A said of its leases during
// the cut and after the heal.
func partitionLeases(t *testing.T, unfenced bool) (ex *executions, ji, jp *store.Job, leases [2]jobs.LeaseState) {
	pg := storetest.PostgresURL(t)
	tp := mcpxtest.StartToxiproxy(t)
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	proxied := *u
	proxied.Host = tp.Proxy("pg", u.Host)
	const lease, work = 1500 * time.Millisecond, 5 * time.Second
	ex = &executions{running: map[string]int{}, runs: map[string][]string{}}
	rerun := func(who string) jobs.Runner {
		return func(ctx context.Context, j *store.Job, c *jobs.Call) (json.RawMessage, error) {
			return ex.run(ctx, who, j.ID, work)
		}
	}
	a := replicaWith(t, proxied.String(), lease, rerun("a"), unfenced)
	b := replica(t, pg, lease, rerun("b"))
	start := func(idempotent bool) string {
		s := spec("alice")
		s.Idempotent, s.Key = idempotent, jobs.Key("files", "export", json.RawMessage(`{"i":`+map[bool]string{true: "1", false: "0"}[idempotent]+`}`))
		var id string
		ready := make(chan struct{})
		c, err := a.m.Start(t.Context(), s, jobs.Now(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
			<-ready
			return ex.run(ctx, "a", id, work)
		}))
		if err != nil {
			t.Fatal(err)
		}
		id = c.ID()
		close(ready)
		return id
	}
	idem, plain := start(true), start(false)
	// Before the cut, both run at A, and a renewal sent since both rows
	// were written has been answered (one comes every third of a term).
	written := time.Now()
	for deadline := time.Now().Add(10 * time.Second); !ex.running1(idem, plain) || !a.m.Leases().Since.After(written); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("before the cut: both jobs running at A %v, leases %+v", ex.running1(idem, plain), a.m.Leases())
		}
	}
	tp.AddToxic("pg", "cut-down", "timeout", false, map[string]any{"timeout": 0})
	tp.AddToxic("pg", "cut-up", "timeout", true, map[string]any{"timeout": 0})
	time.Sleep(4 * lease) // the partition: longer than lease + grace + a search for orphans
	leases[0] = a.m.Leases()
	tp.RemoveToxic("pg", "cut-down")
	tp.RemoveToxic("pg", "cut-up")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ji, err = b.st.Get(t.Context(), "alice", idem)
		if err != nil {
			t.Fatal(err)
		}
		jp, err = b.st.Get(t.Context(), "alice", plain)
		if err != nil {
			t.Fatal(err)
		}
		if ji.Status.Final() && jp.Status.Final() && (jp.Status != store.Interrupted || jp.Late != nil) && (!unfenced || ji.Late != nil) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the partition: idempotent %+v (late %+v), plain %+v (late %+v)", ji, ji.Late, jp, jp.Late)
		}
	}
	// A renewal comes every third of a term: A may have written its
	// ends before one was answered.
	for deadline := time.Now().Add(10 * time.Second); a.m.Leases().Lost && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	leases[1] = a.m.Leases()
	a.stop()
	b.stop()
	return ex, ji, jp, leases
}

// replicaWith is replica, unfenced if asked.
func replicaWith(t *testing.T, url string, lease time.Duration, rerun jobs.Runner, unfenced bool) *harness {
	if !unfenced {
		return replica(t, url, lease, rerun)
	}
	return replicaOpts(t, url, jobs.Options{Rerun: rerun, LeaseTerm: lease}, jobs.Unfenced)
}

// A replica cut off from the store for longer than a lease, while its
// peer reaches it: the peer runs the idempotent job again only once the
// cut-off replica has ended its call (it knew it lost its lease first),
// and closes the other as interrupted; that call runs on at the cut-off
// replica, and its result, which comes after the heal, is kept as the
// job's late result.
func TestPartitionedReplica(t *testing.T) {
	ex, ji, jp, leases := partitionLeases(t, false)
	if !leases[0].Lost || leases[0].Err == nil || leases[1].Lost || leases[1].Err != nil {
		t.Errorf("A's leases during the cut %+v, after it %+v: want lost with the renewal's error, then held", leases[0], leases[1])
	}
	if len(ex.overlap) > 0 {
		t.Errorf("jobs run twice at once: %v (runs %v)", ex.overlap, ex.runs)
	}
	if r := ex.runs[ji.ID]; ji.Status != store.Completed || string(ji.Result) != `{"content":[{"type":"text","text":"done by b"}]}` || len(r) != 2 {
		t.Errorf("idempotent job: %s %s, runs %v", ji.Status, ji.Result, r)
	}
	if r := ex.runs[jp.ID]; len(r) != 1 || jp.Status != store.Interrupted || jp.Late == nil || jp.Late.Status != store.Completed ||
		string(jp.Late.Result) != `{"content":[{"type":"text","text":"done by a"}]}` {
		t.Errorf("plain job: %s %q, late %+v, runs %v", jp.Status, jp.Error, jp.Late, r)
	}
	t.Logf("idempotent: %s attempt %d, note %q; plain: %s, note %q", ji.Status, ji.Attempt, ji.Note, jp.Status, jp.Note)
}

// The same partition with fencing off at the cut-off replica (it does not
// act on the loss of its leases): the idempotent call runs twice at once.
// This is what TestPartitionedReplica guards against. The store's fence
// still holds: A's end, written after the heal while B's run of the job
// goes on, cannot overwrite the job; the job ends with B's result and
// keeps A's as its late one.
func TestPartitionedReplicaUnfenced(t *testing.T) {
	ex, ji, _ := partition(t, true)
	if len(ex.overlap) == 0 {
		t.Fatalf("no job ran twice at once without fencing: runs %v", ex.runs)
	}
	t.Logf("without fencing, job %s ran at once at %v", ji.ID, ex.runs[ji.ID])
	if ji.Status != store.Completed || string(ji.Result) != `{"content":[{"type":"text","text":"done by b"}]}` ||
		ji.Late == nil || string(ji.Late.Result) != `{"content":[{"type":"text","text":"done by a"}]}` {
		t.Errorf("the job run at once: %s %s, late %+v: want B's result, A's kept as late", ji.Status, ji.Result, ji.Late)
	}
}
