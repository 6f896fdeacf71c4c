package jobs

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// TestJobsLoad: 1,000 background jobs started at once by 10 hosts across
// 4 upstreams, then polled with mcpx_job until done. Every job finishes
// with its own result; each upstream ran each call once; the store took a
// bounded number of writes per job; afterwards no job runs, and no
// goroutine (in-process) or descriptor (daemon) is left behind.
func TestJobsLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("the jobs load test takes a few seconds per mode")
	}
	const upstreams, hosts, jobsN = 4, 10, 1000
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		var leaks []goleak.Option
		if mode == mcpxtest.InProcess {
			leaks = []goleak.Option{goleak.IgnoreCurrent()}
		}
		e := mcpxtest.NewEnv(t)
		var demos []mcpxtest.Demo
		for i := range upstreams {
			demos = append(demos, mcpxtest.Demo{Name: fmt.Sprint("u", i)})
		}
		// A job's row must be written within its lease term less a sixth
		// (jobs/hold.go). The embedded store is SQLite compiled to Go: the
		// race detector makes each insert tens of times slower, and a burst
		// of 1,000 on a loaded machine took longer than the default 30 s
		// term, so jobs were refused (and not at the end of the queue:
		// database/sql hands its one connection to any waiter). A longer
		// term keeps what this test asserts, every job kept and its writes
		// counted, apart from the build's speed.
		cfgPath := e.WriteConfig(map[string]any{"jobs": map[string]any{"leaseTerm": "2m"}}, demos...)
		var g harness.LoadGateway
		if mode == mcpxtest.InProcess {
			g = harness.InProcessGateway(t, e, cfgPath)
		} else {
			g = harness.DaemonGateway(t, e, cfgPath)
		}
		hs := make([]*harness.LoadHost, hosts)
		for i := range hs {
			hs[i] = g.Connect()
			hs[i].Initialize()
		}
		for i := range upstreams { // every upstream started
			k := -1 - i
			if m := hs[0].Call(k, []byte(`{"jsonrpc":"2.0","id":`+strconv.Itoa(k)+`,"method":"tools/call","params":{"name":"u`+strconv.Itoa(i)+`__echo","arguments":{}}}`)); m.Error != nil {
				t.Fatalf("warm-up: %s", m.Encode())
			}
		}
		before := g.Status()
		fdsBefore := countFDs(before.PID)

		// The burst: every host sends its 100 background calls at once.
		start := time.Now()
		for k := range jobsN {
			h := hs[k%hosts]
			h.Write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mcpx_call","arguments":{"name":"u%d__sleep_then","arguments":{"seconds":0.5,"text":"T%d"},"background":true}}}`,
				k, k%upstreams, k))
		}
		ids := make([]string, jobsN)
		for k := range jobsN {
			m := waitResponse(t, hs[k%hosts], k, 0)
			var r struct {
				S harness.JobState `json:"structuredContent"`
			}
			if m.Error != nil || json.Unmarshal(m.Result, &r) != nil || r.S.JobID == "" {
				t.Fatalf("job %d: %s", k, m.Encode())
			}
			ids[k] = r.S.JobID
		}
		started := time.Since(start)

		// Poll: each host asks for its jobs, waiting up to 10 s each.
		var wg sync.WaitGroup
		for hi, h := range hs {
			wg.Go(func() {
				for k := hi; k < jobsN; k += hosts {
					for round := 1; ; round++ {
						id := jobsN*round + k
						h.Write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mcpx_job","arguments":{"job_id":%q,"wait_seconds":10}}}`, id, ids[k]))
						m := waitResponse(t, h, id, 0)
						if m == nil {
							return
						}
						var r struct {
							Content []struct{ Text string } `json:"content"`
							S       *harness.JobState       `json:"structuredContent"`
						}
						_ = json.Unmarshal(m.Result, &r)
						if r.S != nil && r.S.Status == "running" && round < 10 {
							continue
						}
						if len(r.Content) == 0 || r.Content[0].Text != fmt.Sprint("T", k) {
							t.Errorf("job %d (%s): %s", k, ids[k], m.Encode())
						}
						break
					}
				}
			})
		}
		wg.Wait()
		wall := time.Since(start)
		for _, h := range hs {
			h.Leave()
		}
		var execs int
		for i := range upstreams {
			execs += harness.Executions(e, fmt.Sprint("u", i), "sleep_then")
		}
		if execs != jobsN {
			t.Errorf("the upstreams ran %d calls for %d jobs", execs, jobsN)
		}
		after := g.Status()
		writes := after.JobStoreWrites - before.JobStoreWrites
		// A job that never reports progress: its row, and its end. Leases
		// are renewed for all jobs at once, a few times a minute.
		if perJob := float64(writes) / jobsN; perJob > 3 {
			t.Errorf("%d store writes for %d jobs (%.2f a job)", writes, jobsN, perJob)
		}
		if len(after.Jobs) != 0 {
			t.Errorf("%d jobs still running after all were read done", len(after.Jobs))
		}
		t.Logf("%s: %d jobs started in %v, all done and read in %v; %d store writes (%.2f a job)", mode, jobsN,
			started.Round(time.Millisecond), wall.Round(time.Millisecond), writes, float64(writes)/jobsN)
		if mode == mcpxtest.InProcess {
			g.Stop()
			goleak.VerifyNone(t, leaks...)
		} else if fdsAfter := countFDs(after.PID); fdsAfter > fdsBefore {
			t.Errorf("the daemon holds %d descriptors after the jobs, %d before", fdsAfter, fdsBefore)
		}
	})
}

// waitResponse waits for h's response to request id; nil after a failure.
func waitResponse(t *testing.T, h *harness.LoadHost, id int, _ int) *jsonrpc.Message {
	deadline := time.Now().Add(harness.WaitLong)
	for time.Now().Before(deadline) {
		h.Mu.Lock()
		rs := h.Responses[id]
		h.Mu.Unlock()
		if len(rs) > 0 {
			return rs[0]
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Errorf("no answer to request %d", id)
	return nil
}

// countFDs counts the open descriptors of process pid.
func countFDs(pid int) int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(ents)
}
