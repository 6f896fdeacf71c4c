package jobs

import (
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// jobHardHost is the clientInfo.name of the hard-timer test host; the
// config gives it a 10 s timer that progress does not reset.
const jobHardHost = "mcpx-jobhost-hard"

// TestJobTSHardTimerHost: TypeScript SDK v1 and v2 hosts whose hard timer
// is 10 s (the config's profile) call a silent tool of 25 s, over stdio and
// HTTP, in process and through the daemon. Each gets a job before its
// timer fires, its retry attaches to the job, mcpx_job never keeps it
// waiting past its timer and finally returns the tool's result; the
// upstream ran the tool once.
func TestJobTSHardTimerHost(t *testing.T) {
	t.Parallel()
	node, interop := mcpxtest.Node(t)
	mcpxtest.NodeModule(t, "@modelcontextprotocol/client", "package.json")
	// A 10 s timer leaves the job a 2 s margin (a fifth of the timer): real
	// hosts' timers of a minute and more get 5 s. Four Node hosts at once
	// on a loaded machine answered up to 1.2 s past mcpx's deadline (a
	// Node host's timer callback runs before it reads a reply that waited
	// while it was descheduled), more than a 2 s or 5 s timer's margin.
	// The tool outlasts the first call and the retry (8 s each) with room.
	const timer = 10 * time.Second
	for _, sdk := range []string{"v1", "v2"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(sdk+"-"+transport, func(t *testing.T) {
				t.Parallel() // each run mostly waits on the silent tool
				mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
					e := mcpxtest.NewEnv(t)
					cfg := e.WriteConfig(map[string]any{"hosts": map[string]any{
						jobHardHost: map[string]any{"timeout": timer.String(), "resetOnProgress": false},
					}}, mcpxtest.Demo{Name: "demo"})
					spec := map[string]any{"sdk": sdk, "transport": transport, "clientName": jobHardHost, "tool": "demo__sleep_then",
						"seconds": 25, "timeoutMs": timer.Milliseconds(), "deadlineMs": 80_000}
					harness.ReachMcpx(t, e, mode, transport, cfg, spec)
					r := harness.RunJobHost(t, node, interop, e, spec)
					harness.CheckJobHost(t, r, timer)
					if n := harness.Executions(e, "demo", "sleep_then"); n != 1 {
						t.Errorf("the upstream ran the tool %d times, want 1", n)
					}
					t.Logf("%s %s %s: job after %d ms, retry attached after %d ms, %d polls within the timer, result read", sdk, transport, mode, r.First.Ms, r.Retry.Ms, len(r.Polls))
				})
			})
		}
	}
}
