package harness

import (
	"encoding/json"
	"testing"

	"mcpx/internal/apitype"
	"mcpx/internal/mcpxtest"
)

// StatusJSON is `mcpx status --json` of the daemon of cfg.
func StatusJSON(t *testing.T, e *mcpxtest.Env, cfg string) apitype.Status {
	t.Helper()
	out, errb, code := e.Run(WaitLong, "status", "--config", cfg, "--json")
	if code != 0 {
		t.Fatalf("mcpx status --json: exit %d: %s %s", code, out, errb)
	}
	var st apitype.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status %s: %v", out, err)
	}
	return st
}

func UpstreamOf(st apitype.Status, name string) apitype.Upstream {
	for _, u := range st.Upstreams {
		if u.Name == name {
			return u
		}
	}
	return apitype.Upstream{}
}
