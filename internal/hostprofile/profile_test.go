package hostprofile

import (
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

func TestLookup(t *testing.T) {
	overrides := map[string]Override{
		"claude-code": {Timeout: ptr(90 * time.Second)},                              // keeps its reset
		"my-host":     {ResetOnProgress: ptr(true)},                                  // the default's timer
		"opencode":    {Timeout: ptr(time.Duration(0)), ResetOnProgress: ptr(false)}, // no timer
	}
	for _, tc := range []struct {
		name string
		want Profile
	}{
		{"claude-code", Profile{Name: "claude-code", Timeout: 90 * time.Second, ResetOnProgress: true, Source: SourceConfig}},
		{"my-host", Profile{Name: "my-host", Timeout: DefaultTimeout, ResetOnProgress: true, Source: SourceConfig}},
		{"opencode", Profile{Name: "opencode", Source: SourceConfig}},
		{"gemini-cli-mcp-client", Profile{Name: "gemini-cli-mcp-client", Timeout: 10 * time.Minute, Source: SourceBuiltin}},
		{"Visual Studio Code", Profile{Name: "Visual Studio Code", Source: SourceBuiltin}},
		// Exact and case-sensitive: another spelling is another host.
		{"Claude-Code", Profile{Name: "Claude-Code", Timeout: DefaultTimeout, Source: SourceDefault}},
		{"", Profile{Timeout: DefaultTimeout, Source: SourceDefault}},
	} {
		if got := Lookup(tc.name, overrides); got != tc.want {
			t.Errorf("Lookup(%q) = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if got := Lookup("codex-mcp-client", nil); got.Timeout != 300*time.Second || got.ResetOnProgress || got.Source != SourceBuiltin {
		t.Errorf("Lookup(codex-mcp-client, nil) = %+v", got)
	}
}

func TestBuiltin(t *testing.T) {
	all := Builtin()
	if len(all) != len(builtin) {
		t.Fatalf("Builtin() has %d profiles, the table %d", len(all), len(builtin))
	}
	for i, p := range all {
		if i > 0 && all[i-1].Name >= p.Name {
			t.Errorf("Builtin() not sorted: %q before %q", all[i-1].Name, p.Name)
		}
		if p.Source != SourceBuiltin || p.Timeout < 0 {
			t.Errorf("Builtin()[%d] = %+v", i, p)
		}
		if p.ResetOnProgress && p.Timeout == 0 {
			t.Errorf("%q resets a timer it does not have", p.Name)
		}
	}
}
