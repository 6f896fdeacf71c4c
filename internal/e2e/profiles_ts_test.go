package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mcpx/internal/hostprofile"
	"mcpx/internal/mcpxtest"
)

// TestBuiltinProfilesTSHosts: a TypeScript SDK host under each built-in
// profile's clientInfo.name, its timer scaled down (the config's
// mcpx.hosts block for that name, the path a user's own setting takes,
// keeping the profile's kind), calls a silent tool. Behind a host whose
// timer progress resets (2 s) the call of ten times that completes on
// heartbeats; behind a hard timer (10 s) the call becomes a job before the
// timer fires, the host's retry attaches to it and mcpx_job returns the
// result; a host with no timer (VS Code's built-in, unscaled) gets the
// result and no heartbeats. Each profile runs once, the SDK (v1, v2), the
// transport (stdio, HTTP) and the mode (in process, daemon) rotating over
// them; the upstream runs each tool once.
func TestBuiltinProfilesTSHosts(t *testing.T) {
	t.Parallel()
	node, interop := mcpxtest.Node(t)
	mcpxtest.NodeModule(t, "@modelcontextprotocol/client", "package.json")
	const hardTimer = 10 * time.Second
	for i, p := range hostprofile.Builtin() {
		sdk := []string{"v1", "v2"}[i%2]
		transport := []string{"stdio", "http"}[(i/2)%2]
		mode := mcpxtest.Modes[(i/4)%2]
		t.Run(strings.ReplaceAll(p.Name, " ", "_"), func(t *testing.T) {
			t.Parallel() // each run mostly waits on a silent tool
			e := mcpxtest.NewEnv(t)
			hosts := map[string]any{}
			switch {
			case p.Timeout == 0:
			case p.ResetOnProgress:
				hosts[p.Name] = map[string]any{"timeout": hbTimer.String(), "resetOnProgress": true}
			default:
				hosts[p.Name] = map[string]any{"timeout": hardTimer.String(), "resetOnProgress": false}
			}
			cfg := e.WriteConfig(map[string]any{"hosts": hosts}, mcpxtest.Demo{Name: "demo"})
			spec := map[string]any{"sdk": sdk, "transport": transport, "clientName": p.Name, "deadlineMs": 80_000}
			reachMcpx(t, e, mode, transport, cfg, spec)
			what := sdk + " " + transport + " " + string(mode)
			switch {
			case p.Timeout == 0:
				spec["tool"], spec["arguments"], spec["timeoutMs"] = "demo__wait", map[string]any{"seconds": hbWork.Seconds()}, 70_000
				r := runTimerHost(t, node, interop, e, spec)
				if r.CallError != "" || r.Result == nil || r.Result.IsError || len(r.Progress) != 0 {
					t.Fatalf("%s without a timer: result %+v, error %q, %d progress; want the result and no heartbeat", what, r.Result, r.CallError, len(r.Progress))
				}
				t.Logf("%s (no timer), %s: result after %.0f ms, no heartbeat", p.Name, what, r.ElapsedMs)
			case p.ResetOnProgress:
				spec["tool"], spec["arguments"], spec["timeoutMs"] = "demo__wait", map[string]any{"seconds": hbWork.Seconds()}, hbTimer.Milliseconds()
				r := runTimerHost(t, node, interop, e, spec)
				checkHeartbeats(t, r)
				t.Logf("%s (reset, %v scaled to %v), %s: %d heartbeats over %.0f ms", p.Name, p.Timeout, hbTimer, what, len(r.Progress), r.ElapsedMs)
			default:
				spec["tool"], spec["seconds"], spec["timeoutMs"] = "demo__sleep_then", 25, hardTimer.Milliseconds()
				r := runJobHost(t, node, interop, e, spec)
				checkJobHost(t, r, hardTimer)
				t.Logf("%s (hard, %v scaled to %v), %s: job after %d ms, retry attached after %d ms, %d polls", p.Name, p.Timeout, hardTimer, what, r.First.Ms, r.Retry.Ms, len(r.Polls))
			}
			tool := "wait"
			if p.Timeout != 0 && !p.ResetOnProgress {
				tool = "sleep_then"
			}
			if n := executions(e, "demo", tool); n != 1 {
				t.Errorf("the upstream ran %s %d times, want 1", tool, n)
			}
		})
	}
}

// runJobHost runs jobhost.mjs with spec and returns its report.
func runJobHost(t *testing.T, node, interop string, e *mcpxtest.Env, spec map[string]any) *jobHostReport {
	t.Helper()
	out, stderr, err := runHostScript(t, e, node, interop, "jobhost.mjs", spec)
	var r jobHostReport
	if jerr := json.Unmarshal(out, &r); jerr != nil || err != nil || !r.OK {
		t.Fatalf("jobhost.mjs: %v %v %s\nstdout %s\nstderr %s", err, jerr, r.Error, out, stderr)
	}
	return &r
}

// checkJobHost judges a hard-timer host's run: a job before its timer,
// the retry attached to it, every poll within the timer, the result read.
func checkJobHost(t *testing.T, r *jobHostReport, timer time.Duration) {
	t.Helper()
	limit := int(timer.Milliseconds())
	if r.First.Structured == nil || r.First.Structured.Status != "running" || r.First.Ms >= limit || !strings.Contains(r.First.Text, "mcpx_job") {
		t.Fatalf("first call: %+v, want a running job within %d ms", r.First, limit)
	}
	if id := r.First.Structured.JobID; r.Retry.Structured == nil || r.Retry.Structured.JobID != id || r.Retry.Ms >= limit {
		t.Errorf("retry: %+v, want job %s within %d ms", r.Retry, id, limit)
	}
	for i, p := range r.Polls {
		if p.Ms >= limit {
			t.Errorf("mcpx_job poll %d took %d ms, past the host's timer", i, p.Ms)
		}
	}
	if r.Final == nil || r.Final.Text != "the export is done" || r.Final.IsError {
		t.Errorf("final: %+v after %d polls", r.Final, len(r.Polls))
	}
}
