package relay

import (
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/hostprofile"
)

// TestHostProfileReload: the config's mcpx.hosts overrides a built-in
// profile and adds one; a reload applies at once to the profiles given
// out from then on.
func TestHostProfileReload(t *testing.T) {
	cfg, err := config.Parse([]byte(`{"mcpx": {"hosts": {"claude-code": {"timeout": "90s"}, "my-agent": {"resetOnProgress": true}}}}`), "t.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := New(cfg, nil, NewRegistry(), nil)
	if got, want := r.HostProfile("claude-code"), (hostprofile.Profile{Name: "claude-code", Timeout: 90 * time.Second, ResetOnProgress: true, Source: hostprofile.SourceConfig}); got != want {
		t.Errorf("claude-code: %+v, want %+v", got, want)
	}
	if got := r.HostProfile("my-agent"); !got.ResetOnProgress || got.Timeout != hostprofile.DefaultTimeout || got.Source != hostprofile.SourceConfig {
		t.Errorf("my-agent: %+v", got)
	}
	empty, err := config.Parse([]byte(`{}`), "t.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.SetConfig(empty)
	if got := r.HostProfile("claude-code"); got.Timeout != 5*time.Minute || got.Source != hostprofile.SourceBuiltin {
		t.Errorf("claude-code after the reload: %+v, want the built-in profile", got)
	}
	if got := r.HostProfile("my-agent"); got != hostprofile.Default("my-agent") {
		t.Errorf("my-agent after the reload: %+v, want the default", got)
	}
}
