package jobs

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store"
)

// jobAskSpec is jobhost.mjs's spec for a TypeScript SDK v1 host with a
// hard timer (10 s, as in TestJobTSHardTimerHost) calling the demo's
// ask_later, which works 12 s silently and then asks: the call is a job
// when the question comes.
func jobAskSpec(t *testing.T, e *mcpxtest.Env, mode mcpxtest.Mode, transport string) (spec map[string]any, cfg string, timer time.Duration) {
	timer = 10 * time.Second
	cfg = e.WriteConfig(map[string]any{"hosts": map[string]any{
		jobHardHost: map[string]any{"timeout": timer.String(), "resetOnProgress": false},
	}}, mcpxtest.Demo{Name: "demo", Args: []string{"-era", "legacy"}})
	spec = map[string]any{"sdk": "v1", "transport": transport, "clientName": jobHardHost, "tool": "demo__ask_later",
		"arguments": map[string]any{"seconds": 12, "message": "Which colour?"}, "noRetry": true,
		"capabilities": map[string]any{"elicitation": map[string]any{}},
		"timeoutMs":    timer.Milliseconds(), "deadlineMs": 80_000}
	harness.ReachMcpx(t, e, mode, transport, cfg, spec)
	return spec, cfg, timer
}

// TestJobAskTSHost: a TypeScript SDK v1 host with a hard timer, over
// stdio and HTTP, in process and through the daemon, gets a job for a
// call whose upstream asks only after that; the question reaches the
// host (on its connection, or its session's GET stream), its answer
// reaches the upstream, and mcpx_job returns the tool's result with that
// answer in it. The upstream ran the tool once.
func TestJobAskTSHost(t *testing.T) {
	node, interop := mcpxtest.Node(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel() // each run mostly waits on the silent tool
			mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
				e := mcpxtest.NewEnv(t)
				spec, _, timer := jobAskSpec(t, e, mode, transport)
				spec["elicit"] = map[string]any{"action": "accept", "content": map[string]any{"answer": "teal"}}
				r := harness.RunJobHost(t, node, interop, e, spec)
				limit := int(timer.Milliseconds())
				if r.First.Structured == nil || r.First.Structured.Status != "running" || r.First.Ms >= limit {
					t.Fatalf("first call: %+v, want a running job within %d ms", r.First, limit)
				}
				if len(r.Asked) != 1 || !r.Asked[0].AfterJob || !strings.Contains(string(r.Asked[0].Params), `"message":"Which colour?"`) {
					t.Fatalf("questions the host was asked: %+v, want the tool's one, after the job answer", r.Asked)
				}
				for i, p := range r.Polls {
					if p.Ms >= limit {
						t.Errorf("mcpx_job poll %d took %d ms, past the host's timer", i, p.Ms)
					}
				}
				if r.Final == nil || r.Final.IsError || !strings.Contains(r.Final.Text, `{"result":{"action":"accept","content":{"answer":"teal"}}}`) {
					t.Fatalf("final: %+v after %d polls, want the host's answer in the tool's result", r.Final, len(r.Polls))
				}
				if n := harness.Executions(e, "demo", "ask_later"); n != 1 {
					t.Errorf("the upstream ran the tool %d times, want 1", n)
				}
				t.Logf("%s %s: job after %d ms, asked after the job, answer in the result after %d polls", transport, mode, r.First.Ms, len(r.Polls))
			})
		})
	}
}

// TestJobAskHostGone: the host leaves as soon as it has the job answer
// (stdio through the daemon, whose job outlives its host; HTTP, whose
// session is left without a GET stream). The upstream's question gets
// an error that names the job and says why; the job goes on and ends
// with the upstream's result, read with mcpx jobs show from the daemon
// (over HTTP, mcpx serve --http has no daemon: from its store).
func TestJobAskHostGone(t *testing.T) {
	node, interop := mcpxtest.Node(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
				if transport == "stdio" && mode == mcpxtest.InProcess {
					t.Skip("mcpx serve --in-process ends its calls with its host: no job outlives it")
				}
				e := mcpxtest.NewEnv(t)
				spec, cfg, _ := jobAskSpec(t, e, mode, transport)
				spec["leave"] = true
				r := harness.RunJobHost(t, node, interop, e, spec)
				if r.First.Structured == nil || r.First.Structured.Status != "running" {
					t.Fatalf("first call: %+v, want a running job", r.First)
				}
				id := r.First.Structured.JobID
				var status, result string
				if transport == "http" { // mcpx serve --http: no daemon to ask, its store read
					j := harness.KeptJob(t, e, mode, "job="+id)
					status, result = string(j.Status), string(j.Result)
				} else {
					for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
						out, stderr, code := e.Run(harness.RelayWait, "jobs", "show", id, "--json", "--config", cfg)
						var j struct {
							Status string          `json:"status"`
							Result json.RawMessage `json:"result"`
						}
						if code != 0 || json.Unmarshal([]byte(out), &j) != nil {
							t.Fatalf("mcpx jobs show %s: exit %d: %s %s", id, code, out, stderr)
						}
						status, result = j.Status, string(j.Result)
						if status != "running" || time.Now().After(deadline) {
							break
						}
					}
				}
				if status != string(store.Completed) || !strings.Contains(result, "mcpx cannot put this elicitation/create to the host of job "+id) ||
					!strings.Contains(result, "the job goes on without an answer") {
					t.Fatalf("job %s: %s %s, want completed with the refusal naming it", id, status, result)
				}
				if n := harness.Executions(e, "demo", "ask_later"); n != 1 {
					t.Errorf("the upstream ran the tool %d times, want 1", n)
				}
				t.Logf("%s %s: job %s ended %s: %s", transport, mode, id, status, result)
			})
		})
	}
}

// TestJobLogMessages: a host with a hard timer (2 s, its profile) calls
// a tool of an HTTP upstream that works silently past it and then logs on
// the call's own stream. The call is a job by then; its log messages
// reach the host on its connection all the same, at its level, and the
// tool's own result never follows the job answer on the request: only
// mcpx_job returns it.
func TestJobLogMessages(t *testing.T) {
	legacyURL, _, _ := harness.StartDemoHTTP(t, "-surface", "-era", "legacy")
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		b, err := json.Marshal(map[string]any{
			"mcpServers": map[string]any{"old": map[string]any{"type": "http", "url": legacyURL}},
			"mcpx":       map[string]any{"hosts": map[string]any{"mcpxtest": map[string]any{"timeout": "2s", "resetOnProgress": false}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		cfg := e.Path("config.json")
		if err := os.WriteFile(cfg, b, 0o600); err != nil {
			t.Fatal(err)
		}
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		h.Result(h.Request("logging/setLevel", map[string]any{"level": "warning"}), harness.WaitLong)
		id := h.Request("tools/call", map[string]any{"name": "old__log", "arguments": map[string]any{"levels": []string{"info", "warning"}, "message": "late", "after": 3}})
		job := harness.JobOf(t, h.Result(id, harness.WaitLong))
		if job.Status != "running" {
			t.Fatalf("the call: %+v, want a running job", job)
		}
		h.WaitFor(harness.WaitLong, "the job's warning on the host's connection", func(r mcpxtest.Received) bool {
			return string(r.Raw) == `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"warning: late","level":"warning","logger":"demo"}}`
		})
		res := h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": job.JobID, "wait_seconds": 1}}), harness.WaitLong)
		if got := harness.ResultText(t, res); got != "sent: warning" {
			t.Fatalf("mcpx_job: %q, want the tool's result", got)
		}
		answers := 0
		for _, r := range h.Received() {
			if r.Msg.Method == "notifications/message" && strings.Contains(string(r.Raw), "info: late") {
				t.Errorf("a message below the host's level reached it: %s", r.Raw)
			}
			if r.Msg.Method == "" && r.Msg.ID.String() == id.String() {
				answers++
			}
		}
		if answers != 1 {
			t.Errorf("the call's request was answered %d times, want once (the job)", answers)
		}
	})
}

// TestJobAskModernHost: a 2026-07-28 host with a hard timer (2 s, its
// profile) gets a job for a call whose upstream asks only after that. It
// takes questions only as input_required in the answer to its own
// request, which was the job: a legacy upstream's elicitation request is
// answered with the error naming the job (the tool's result carries it),
// and a 2026-07-28 upstream's input_required ends the job with a tool
// error naming it. Each upstream ran the tool once.
func TestJobAskModernHost(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"hosts": map[string]any{"mcpxtest": map[string]any{"timeout": "2s", "resetOnProgress": false}}},
			mcpxtest.Demo{Name: "old", Args: []string{"-era", "legacy"}}, mcpxtest.Demo{Name: "new", Args: []string{"-era", "modern"}})
		h := e.StartHost(mode, cfg)
		meta := mcpxtest.ModernMeta(map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}}})
		for _, server := range []string{"old", "new"} {
			job := harness.JobOf(t, h.Result(h.Request("tools/call", map[string]any{"name": server + "__ask_later", "arguments": map[string]any{"seconds": 3}, "_meta": meta}), harness.WaitLong))
			if job.Status != "running" {
				t.Fatalf("%s: %+v, want a running job", server, job)
			}
			res := h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": job.JobID, "wait_seconds": 1}, "_meta": meta}), harness.WaitLong)
			for deadline := time.Now().Add(harness.WaitLong); strings.Contains(string(res), `"status":"running"`) && time.Now().Before(deadline); {
				res = h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": job.JobID, "wait_seconds": 1}, "_meta": meta}), harness.WaitLong)
			}
			want := "mcpx cannot put this elicitation/create to the host of job " + job.JobID + ": its host speaks 2026-07-28"
			if !strings.Contains(string(res), want) || strings.Contains(string(res), "input_required\"") {
				t.Fatalf("%s: mcpx_job: %s, want %q", server, res, want)
			}
			if server == "new" && (!strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), "the job ended")) {
				t.Errorf("new: %s, want a tool error", res)
			}
			if n := harness.Executions(e, server, "ask_later"); n != 1 {
				t.Errorf("%s ran the tool %d times, want 1", server, n)
			}
			t.Logf("%s %s: %s", server, mode, res)
		}
	})
}

// TestJobAskModernUpstream: a legacy host with a hard timer (2 s, its
// profile) that stays connected gets a job for a call to a 2026-07-28
// upstream, which asks with input_required after that. mcpx puts the
// question to the host on its connection, and retries the upstream with
// the answer (a second round, as that revision works); mcpx_job returns
// the result with the answer in it.
func TestJobAskModernUpstream(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"hosts": map[string]any{"mcpxtest": map[string]any{"timeout": "2s", "resetOnProgress": false}}},
			mcpxtest.Demo{Name: "new", Args: []string{"-era", "modern"}})
		h := e.StartHost(mode, cfg)
		h.Result(h.Request("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}},
			"clientInfo": map[string]any{"name": "mcpxtest", "version": "1"}}), harness.WaitLong)
		h.Notify("notifications/initialized", nil)
		job := harness.JobOf(t, h.Result(h.Request("tools/call", map[string]any{"name": "new__ask_later", "arguments": map[string]any{"seconds": 3, "message": "Which fruit?"}}), harness.WaitLong))
		if job.Status != "running" {
			t.Fatalf("the call: %+v, want a running job", job)
		}
		q := h.WaitFor(harness.WaitLong, "the job's question", func(r mcpxtest.Received) bool { return r.Msg.Method == "elicitation/create" })
		if !strings.Contains(string(q.Msg.Params), "Which fruit?") {
			t.Fatalf("question %s", q.Raw)
		}
		h.Send(map[string]any{"jsonrpc": "2.0", "id": q.Msg.ID.Raw(), "result": map[string]any{"action": "accept", "content": map[string]any{"answer": "plum"}}})
		res := h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": job.JobID, "wait_seconds": 1}}), harness.WaitLong)
		for deadline := time.Now().Add(harness.WaitLong); strings.Contains(string(res), `"status":"running"`) && time.Now().Before(deadline); {
			res = h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": job.JobID, "wait_seconds": 1}}), harness.WaitLong)
		}
		if !strings.Contains(string(res), `\"answer\":\"plum\"`) {
			t.Fatalf("mcpx_job: %s, want the host's answer in the tool's result", res)
		}
		if n := harness.Executions(e, "new", "ask_later"); n != 2 {
			t.Errorf("the upstream saw %d rounds, want 2 (the call, then its retry with the answer)", n)
		}
	})
}
