package daemon

import (
	"strings"
	"testing"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestStatusMemory: mcpx status says what each of mcpx's processes
// costs, read from /proc: the daemon, the server's process (its shim)
// and, once a script has run, each warm sandbox child.
func TestStatusMemory(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_exec", "arguments": map[string]any{"code": "return 1"}}), harness.WaitLong)
	var last apitype.Status
	harness.WaitStatus(t, e, cfg, "the daemon, the server and two warm sandbox children in memory", func(st apitype.Status) bool {
		last = st
		roles := map[string]int{}
		for _, m := range st.Memory {
			if m.RSS <= 0 || m.PSS <= 0 || m.PSS > m.RSS {
				return false
			}
			roles[m.Role]++
		}
		return roles["daemon"] == 1 && roles["server"] == 1 && roles["sandbox"] == 2
	})
	for _, m := range last.Memory {
		switch m.Role {
		case "daemon":
			if m.PID != last.PID {
				t.Errorf("the daemon's memory is of pid %d, the daemon is %d", m.PID, last.PID)
			}
		case "server":
			if len(last.Upstreams) != 1 || m.Server != "demo" || m.PID != last.Upstreams[0].PID {
				t.Errorf("the server's memory %+v, upstreams %+v", m, last.Upstreams)
			}
		}
	}
	out, _, _ := e.Run(harness.WaitLong, "status", "--config", cfg)
	for _, want := range []string{"MEMORY", "server demo", "sandbox child (warm)", "SHARE (PSS)"} {
		if !strings.Contains(out, want) {
			t.Errorf("mcpx status does not say %q:\n%s", want, out)
		}
	}
}
