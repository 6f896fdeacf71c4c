package replicas

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// TestLateResultShown: replica A, cut off from PostgreSQL for three
// lease terms, runs a plain (not idempotent) 15 s call to its end; B
// closes the job as interrupted meanwhile, and A keeps its end as the
// job's late result once the cut heals. Wherever a person or a host
// reads that job on B, it reads interrupted and the late result beside
// it: `mcpx jobs show` and GET /v1/jobs/{id} (B's config's daemon, on
// the shared store), and tasks/get and
// tasks/result of both task eras (2025-11-25 in a session, the
// 2026-07-28 extension).
func TestLateResultShown(t *testing.T) {
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
	var started struct{ IDs []string }
	c.Host(t, map[string]any{"url": c.Replicas[0].URL, "mode": "start", "count": 1, "tool": "demo__wait", "tag": "late", "arguments": map[string]any{"seconds": 15}}, &started)
	id := started.IDs[0]
	for deadline := time.Now().Add(harness.WaitLong); len(c.Runs(t, "wait")) < 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("replica A's upstream did not get the call")
		}
	}
	tp.AddToxic("pg", "cut-down", "timeout", false, map[string]any{"timeout": 0})
	tp.AddToxic("pg", "cut-up", "timeout", true, map[string]any{"timeout": 0})
	time.Sleep(9 * time.Second) // the partition: three lease terms
	tp.RemoveToxic("pg", "cut-down")
	tp.RemoveToxic("pg", "cut-up")

	st, err := store.OpenPostgres(t.Context(), pg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var j *store.Job
	for deadline := time.Now().Add(harness.WaitLong); ; time.Sleep(100 * time.Millisecond) {
		if j, err = st.Get(t.Context(), "", id); err == nil && j.Late != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s has no late end after %v: %+v %v", id, harness.WaitLong, j, err)
		}
	}
	if j.Status != store.Interrupted || j.Late.Status != store.Completed {
		t.Fatalf("job %s: %s with a late %s end, want interrupted with a completed late end", id, j.Status, j.Late.Status)
	}
	const want = "waited 15 seconds"

	// mcpx jobs show, on B's config (its daemon reads the shared store).
	out, errb, code := c.Envs[1].Run(harness.WaitLong, "jobs", "show", id, "--config", c.Cfgs[1])
	if code != 0 || !strings.Contains(out, "status   interrupted") || !strings.Contains(out, "late     completed") || !strings.Contains(out, want) {
		t.Errorf("mcpx jobs show %s: exit %d\n%s%s\nwant interrupted, its late completed end and %q", id, code, out, errb, want)
	}
	t.Cleanup(c.Envs[1].StopDaemons)

	// GET /v1/jobs/{id} on that daemon's socket.
	v1, _ := harness.StartV1Daemon(t, c.Envs[1], c.Cfgs[1])
	var aj apitype.Job
	if code := v1.Json(http.MethodGet, "/v1/jobs/"+id, nil, &aj); code != http.StatusOK || aj.Status != "interrupted" || aj.Late == nil ||
		aj.Late.Status != "completed" || !strings.Contains(string(aj.Late.Result), want) {
		t.Errorf("GET /v1/jobs/%s: %d %+v, want interrupted with its late completed result", id, code, aj)
	}

	// 2025-11-25 tasks, in a session on B.
	b := harness.NewRawHost(t, &harness.HTTPMCPX{URL: c.Replicas[1].URL, Token: c.Token})
	b.Initialize("2025-11-25")
	ver := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	last := func(method string) (json.RawMessage, string) {
		t.Helper()
		r := b.Do(harness.JsonText(map[string]any{"jsonrpc": "2.0", "id": "l", "method": method, "params": map[string]any{"taskId": id}}), ver)
		if r.Status != http.StatusOK || len(r.Msgs) == 0 {
			t.Fatalf("%s on B: %d %s", method, r.Status, r.Body)
		}
		m := r.Msgs[len(r.Msgs)-1]
		if m.Error != nil {
			e, _ := json.Marshal(m.Error)
			return nil, string(e)
		}
		return m.Result, ""
	}
	var task struct{ Status, StatusMessage string }
	if res, _ := last("tasks/get"); json.Unmarshal(res, &task) != nil || task.Status != "failed" || !strings.Contains(task.StatusMessage, "ended completed") {
		t.Errorf("2025-11-25 tasks/get of the late job: %s, want failed, its message telling of the late completed end", res)
	}
	if _, e := last("tasks/result"); !strings.Contains(e, "interrupted") || !strings.Contains(e, `"late":{"status":"completed"`) || !strings.Contains(e, want) {
		t.Errorf("2025-11-25 tasks/result of the late job: error %s, want interrupted with the late result in its data", e)
	}

	// 2026-07-28 tasks extension, on B.
	m := harness.NewRawHost(t, &harness.HTTPMCPX{URL: c.Replicas[1].URL, Token: c.Token})
	r := m.Do(harness.ModernRequest("m", "tasks/get", id, map[string]any{"taskId": id}))
	if r.Status != http.StatusOK || len(r.Msgs) == 0 || r.Msgs[len(r.Msgs)-1].Error != nil {
		t.Fatalf("2026-07-28 tasks/get on B: %d %s", r.Status, r.Body)
	}
	var ext struct {
		Status string
		Error  *struct {
			Message string
			Data    json.RawMessage
		}
	}
	res := r.Msgs[len(r.Msgs)-1].Result
	if json.Unmarshal(res, &ext) != nil || ext.Status != "failed" || ext.Error == nil || !strings.Contains(ext.Error.Message, "ended completed") || !strings.Contains(string(ext.Error.Data), want) {
		t.Errorf("2026-07-28 tasks/get of the late job: %s, want failed, its error telling of and holding the late result", res)
	}
	t.Logf("job %s: %s; late %s at %s; the CLI, /v1 and both task eras show it", id, j.Status, j.Late.Status, j.Late.At.Format(time.TimeOnly))
}
