package daemon

import (
	"strings"
	"testing"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestRestartCommand: mcpx restart SERVER stops the server, the call in
// flight on it ending with an error that says it was restarted, and
// starts it again at once as a new process; an unknown server is an
// error naming it. (The daemon's verb: an in-process mcpx has no socket.)
func TestRestartCommand(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	id := harness.SendCall(h, "901", "demo__export", map[string]any{"seconds": 30, "steps": 30}, map[string]any{"progressToken": "r"})
	h.WaitFor(harness.WaitLong, "the call's progress", func(r mcpxtest.Received) bool {
		p, ok := harness.AsProgress(t, r)
		return ok && string(p.Token) == `"r"`
	})
	before := harness.DaemonStatus(t, e, cfg).Upstreams[0]

	out, errOut, code := e.Run(harness.WaitLong, "restart", "--config", cfg, "demo")
	if code != 0 || strings.TrimSpace(out) != "restarting demo" {
		t.Fatalf("mcpx restart demo: exit %d, %q %q", code, out, errOut)
	}
	err, _ := harness.ResponseError(t, h, id)
	if !strings.Contains(err.Message, `upstream "demo" was restarted`) {
		t.Errorf("the call in flight ended with %+v; want it to say the server was restarted", err)
	}
	harness.WaitStatus(t, e, cfg, "demo running again", func(st apitype.Status) bool {
		u := st.Upstreams[0]
		return u.State == "ready" && u.Starts == before.Starts+1 && u.PID != before.PID && u.PID != 0
	})
	if got := harness.ResultText(t, h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"k": 2}}), harness.WaitLong)); got != `{"k":2}` {
		t.Errorf("echo after the restart = %q", got)
	}

	_, errOut, code = e.Run(harness.WaitLong, "restart", "--config", cfg, "nosuch")
	if code != 2 || !strings.Contains(errOut, `no server "nosuch" in the config (the servers are demo)`) {
		t.Errorf("restart of an unknown server: exit %d, stderr %q", code, errOut)
	}
}
