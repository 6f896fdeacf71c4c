package replicas

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
)

// TestReplicasTasks: 2026-07-28 hosts start 200 tasks (the tasks
// extension) through nginx, round-robin over two replicas sharing
// PostgreSQL, and poll each with tasks/get through nginx until it ends:
// every one completes with its own text, and the upstreams together ran
// the tool 200 times. Then, on the replicas' own endpoints: a 2026-07-28
// task created on A is read and cancelled on B (A's upstream is told);
// 2025-11-25 task-augmented calls made in a session on A are read
// (tasks/get, tasks/list, tasks/result) and cancelled (tasks/cancel) in
// a session on B.
func TestReplicasTasks(t *testing.T) {
	c := harness.StartClusterWith(t, harness.ClusterOpts{Jobs: map[string]any{"leaseTerm": "5s", "taskAfter": "0s", "taskPollInterval": "100ms"}})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	t.Cleanup(hc.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	const n, parallel = 200, 20
	started := time.Now()
	var mu sync.Mutex
	var failures []string
	polls := 0
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for i := range work {
				text := fmt.Sprint("task-", i)
				body, hdr := harness.ModernRequest(i, "tools/call", "demo__sleep_then", map[string]any{"name": "demo__sleep_then", "arguments": map[string]any{"seconds": 0.5, "text": text}})
				m, err := harness.PostMCP(ctx, hc, c.URL, c.Token, body, hdr)
				if err != nil || m.Error != nil {
					fail("task %d: tools/call: %v %v", i, err, m)
					continue
				}
				var tk harness.ExtTask
				if json.Unmarshal(m.Result, &tk) != nil || tk.ResultType != "task" || tk.TaskID == "" {
					fail("task %d: tools/call answered %s, want a task", i, m.Result)
					continue
				}
				for {
					body, hdr := harness.ModernRequest(i, "tasks/get", tk.TaskID, map[string]any{"taskId": tk.TaskID})
					m, err := harness.PostMCP(ctx, hc, c.URL, c.Token, body, hdr)
					mu.Lock()
					polls++
					mu.Unlock()
					if err != nil || m.Error != nil || json.Unmarshal(m.Result, &tk) != nil {
						fail("task %d: tasks/get: %v %v", i, err, m)
						break
					}
					if tk.Status != "working" {
						var res struct{ Content []struct{ Text string } }
						if tk.Status != "completed" || json.Unmarshal(tk.Result, &res) != nil || len(res.Content) == 0 || res.Content[0].Text != text {
							fail("task %d (%s): %s %s", i, tk.TaskID, tk.Status, tk.Result)
						}
						break
					}
					select {
					case <-ctx.Done():
						fail("task %d: still working at the deadline", i)
						return
					case <-time.After(100 * time.Millisecond):
					}
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	took := time.Since(started)
	for _, f := range failures {
		t.Error(f)
	}
	total, each := c.Executions("sleep_then")
	if total != n {
		t.Errorf("the upstreams ran the tool %d times (%v per replica), want %d", total, each, n)
	}
	if slices.Contains(each, 0) {
		t.Errorf("a replica ran no task (%v): the balancer did not spread them", each)
	}
	t.Logf("%d tasks through nginx in %v, %d tasks/get polls; executions per replica %v", n, took, polls, each)

	replicaTasksModern(t, c)
	replicaTasksLegacy(t, c)
}

// replicaTasksModern: a 2026-07-28 task made on replica A is read and
// cancelled on replica B; A's upstream sees the cancel.
func replicaTasksModern(t *testing.T, c *harness.Cluster) {
	a := harness.NewRawHost(t, &harness.HTTPMCPX{URL: c.Replicas[0].URL, Token: c.Token})
	b := harness.NewRawHost(t, &harness.HTTPMCPX{URL: c.Replicas[1].URL, Token: c.Token})
	call := func(h *harness.RawHost, method, name string, params map[string]any) harness.ExtTask {
		t.Helper()
		r := h.Do(harness.ModernRequest("m", method, name, params))
		if r.Status != http.StatusOK || len(r.Msgs) == 0 || r.Msgs[len(r.Msgs)-1].Error != nil {
			t.Fatalf("%s on %s: %d %s", method, h.M.URL, r.Status, r.Body)
		}
		var tk harness.ExtTask
		if err := json.Unmarshal(r.Msgs[len(r.Msgs)-1].Result, &tk); err != nil {
			t.Fatal(err)
		}
		return tk
	}
	tk := call(a, "tools/call", "demo__wait", map[string]any{"name": "demo__wait", "arguments": map[string]any{"seconds": 60}})
	if tk.ResultType != "task" || tk.Status != "working" {
		t.Fatalf("a 60 s call on A: %+v, want a working task", tk)
	}
	c.Envs[0].WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool { return ev.Event == "request" && ev.Tool == "wait" })
	if got := call(b, "tasks/get", tk.TaskID, map[string]any{"taskId": tk.TaskID}); got.Status != "working" || got.TaskID != tk.TaskID {
		t.Errorf("tasks/get on B of A's task: %+v, want working", got)
	}
	if ack := call(b, "tasks/cancel", tk.TaskID, map[string]any{"taskId": tk.TaskID}); ack.ResultType != "complete" {
		t.Errorf("tasks/cancel on B: %+v", ack)
	}
	ev := c.Envs[0].WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool { return ev.Event == demo.EventCancelled && ev.Tool == "wait" })
	if !strings.Contains(ev.Reason, "tasks/cancel") {
		t.Errorf("A's upstream was told %q, want the host's tasks/cancel named", ev.Reason)
	}
	if got := call(b, "tasks/get", tk.TaskID, map[string]any{"taskId": tk.TaskID}); got.Status != "cancelled" {
		t.Errorf("tasks/get on B after its cancel: %+v", got)
	}
	t.Logf("2026-07-28: A's task read and cancelled on B; A's upstream was told %q", ev.Reason)
}

// replicaTasksLegacy: 2025-11-25 task-augmented calls in a session on
// replica A, read and cancelled in a session on replica B (both sessions
// are the default token's principal, to whom the tasks belong).
func replicaTasksLegacy(t *testing.T, c *harness.Cluster) {
	a := harness.NewRawHost(t, &harness.HTTPMCPX{URL: c.Replicas[0].URL, Token: c.Token})
	b := harness.NewRawHost(t, &harness.HTTPMCPX{URL: c.Replicas[1].URL, Token: c.Token})
	a.Initialize("2025-11-25")
	b.Initialize("2025-11-25")
	ver := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	req := func(h *harness.RawHost, method string, params map[string]any) json.RawMessage {
		t.Helper()
		r := h.Do(harness.JsonText(map[string]any{"jsonrpc": "2.0", "id": "l", "method": method, "params": params}), ver)
		if r.Status != http.StatusOK || len(r.Msgs) == 0 || r.Msgs[len(r.Msgs)-1].Error != nil {
			t.Fatalf("%s on %s: %d %s", method, h.M.URL, r.Status, r.Body)
		}
		return r.Msgs[len(r.Msgs)-1].Result
	}
	create := func(tool string, args map[string]any) string {
		t.Helper()
		var created struct {
			Task struct{ TaskID, Status string }
		}
		raw := req(a, "tools/call", map[string]any{"name": tool, "arguments": args, "task": map[string]any{"ttl": 60000}})
		if err := json.Unmarshal(raw, &created); err != nil || created.Task.TaskID == "" || created.Task.Status != "working" {
			t.Fatalf("a task-augmented %s on A: %s", tool, raw)
		}
		return created.Task.TaskID
	}
	before := harness.Executions(c.Envs[0], "demo", "sleep_then")
	const k = 10
	var ids []string
	for i := range k {
		ids = append(ids, create("demo__sleep_then", map[string]any{"seconds": 0.3, "text": fmt.Sprint("legacy-", i)}))
	}
	for i, id := range ids {
		res := req(b, "tasks/result", map[string]any{"taskId": id})
		if harness.ResultText(t, res) != fmt.Sprint("legacy-", i) || !strings.Contains(string(res), id) {
			t.Errorf("tasks/result on B of A's task %s: %s, want its text and related-task", id, res)
		}
		var got struct{ TaskID, Status string }
		if err := json.Unmarshal(req(b, "tasks/get", map[string]any{"taskId": id}), &got); err != nil || got.Status != "completed" {
			t.Errorf("tasks/get on B of A's ended task %s: %+v %v", id, got, err)
		}
	}
	var list struct{ Tasks []struct{ TaskID string } }
	if err := json.Unmarshal(req(b, "tasks/list", map[string]any{}), &list); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if !slices.ContainsFunc(list.Tasks, func(x struct{ TaskID string }) bool { return x.TaskID == id }) {
			t.Errorf("tasks/list on B lacks A's task %s", id)
		}
	}
	if ran := harness.Executions(c.Envs[0], "demo", "sleep_then") - before; ran != k {
		t.Errorf("A's upstream ran %d of the session's %d tasks, want all: each once, where it was created", ran, k)
	}

	long := create("demo__wait", map[string]any{"seconds": 60})
	c.Envs[0].WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool {
		return ev.Event == "request" && ev.Tool == "wait" && harness.Executions(c.Envs[0], "demo", "wait") == 2
	})
	var cancelled struct{ TaskID, Status string }
	if err := json.Unmarshal(req(b, "tasks/cancel", map[string]any{"taskId": long}), &cancelled); err != nil || cancelled.Status != "cancelled" {
		t.Errorf("tasks/cancel on B of A's task: %+v %v", cancelled, err)
	}
	c.Envs[0].WaitRecord("demo", harness.WaitLong, func(demo.Event) bool { return len(harness.Cancellations(c.Envs[0], "demo")) == 2 })
	cs := harness.Cancellations(c.Envs[0], "demo")
	evs := cs[len(cs)-1]
	if !strings.Contains(evs.Reason, "tasks/cancel") {
		t.Errorf("A's upstream was told %q, want the host's tasks/cancel named", evs.Reason)
	}
	t.Logf("2025-11-25: %d tasks of a session on A read in a session on B; a cancel from B reached A's upstream: %q", k, evs.Reason)
}
