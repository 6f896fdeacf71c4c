package jobs_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"mcpx/internal/config"
	"mcpx/internal/jobs"
	"mcpx/internal/principal"
)

// TestScriptTarget: a script's job keeps the tool filter it ran under,
// and the policy decides it by that, running (Live) and stored alike: a
// host with the same filter reads it, one with another does not.
func TestScriptTarget(t *testing.T) {
	cfg, err := config.Parse([]byte(`{"mcpx": {"hosts": {"one": {"tools": ["demo__*"]}, "two": {"tools": ["demo__*"]}}}}`), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	one := principal.NewPolicy(principal.Host("one"), cfg.HostTools("one"), "__")
	two := principal.NewPolicy(principal.Host("two"), cfg.HostTools("two"), "__")
	if p := jobs.ScriptParams(principal.NewPolicy(principal.Host("x"), nil, "__")); p != nil {
		t.Errorf("a script without a filter keeps params %s", p)
	}
	h := start(t, filepath.Join(t.TempDir(), "jobs.db"), nil)
	defer h.stop()
	release := make(chan struct{})
	sp := jobs.Spec{Principal: principal.LocalID, Tool: "mcpx_exec", Key: jobs.NewID(), Params: jobs.ScriptParams(one)}
	c, err := h.m.Start(t.Context(), sp, jobs.Now(func(context.Context, *jobs.Call) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`{}`), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	live := h.m.Live()
	if len(live) != 1 {
		t.Fatalf("%d running jobs, want 1", len(live))
	}
	j, err := h.m.Get(t.Context(), principal.LocalID, c.ID())
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]principal.Target{"running": live[0].Target(), "stored": jobs.Target(j)} {
		if target.ID != c.ID() || target.Owner != principal.LocalID || target.Filter != "mcpx.hosts.one.tools" {
			t.Errorf("%s: target %+v", name, target)
		}
		if err := one.Decide(principal.ReadJob, target); err != nil {
			t.Errorf("%s: the host it ran under: %v", name, err)
		}
		if err := two.Decide(principal.ReadJob, target); err == nil {
			t.Errorf("%s: a host of another filter reads it", name)
		}
	}
}
