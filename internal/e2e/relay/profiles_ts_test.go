package relay

import (
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
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
			harness.ReachMcpx(t, e, mode, transport, cfg, spec)
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
				r := harness.RunJobHost(t, node, interop, e, spec)
				harness.CheckJobHost(t, r, hardTimer)
				t.Logf("%s (hard, %v scaled to %v), %s: job after %d ms, retry attached after %d ms, %d polls", p.Name, p.Timeout, hardTimer, what, r.First.Ms, r.Retry.Ms, len(r.Polls))
			}
			tool := "wait"
			if p.Timeout != 0 && !p.ResetOnProgress {
				tool = "sleep_then"
			}
			if n := harness.Executions(e, "demo", tool); n != 1 {
				t.Errorf("the upstream ran %s %d times, want 1", tool, n)
			}
		})
	}
}
