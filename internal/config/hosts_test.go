package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseHosts(t *testing.T) {
	c, err := parse(`{"mcpx": {"hosts": {
		"claude-code": {"timeout": "90s"},
		"Visual Studio Code": {"timeout": 0, "resetOnProgress": false},
		"my-host": {"timeout": 12.5, "resetOnProgress": true},
		"bare": {}
	}}}`)
	if err != nil {
		t.Fatal(err)
	}
	d := func(v time.Duration) *time.Duration { return &v }
	b := func(v bool) *bool { return &v }
	want := map[string]*Host{
		"claude-code":        {Timeout: d(90 * time.Second)},
		"Visual Studio Code": {Timeout: d(0), ResetOnProgress: b(false)},
		"my-host":            {Timeout: d(12500 * time.Millisecond), ResetOnProgress: b(true)},
		"bare":               {},
	}
	if diff := cmp.Diff(want, c.Hosts); diff != "" {
		t.Errorf("Hosts (-want +got):\n%s", diff)
	}
	if c, err := parse(`{}`); err != nil || c.Hosts != nil {
		t.Errorf("no hosts block: Hosts = %v, %v; want nil", c.Hosts, err)
	}
}

func TestParseHostsErrors(t *testing.T) {
	const f = "config " + testFile + ": "
	for _, tc := range []struct{ name, data, want string }{
		{"not an object", `{"mcpx": {"hosts": []}}`, f + `mcpx.hosts: must be an object`},
		{"host not an object", `{"mcpx": {"hosts": {"h": "60s"}}}`, f + `mcpx.hosts.h: must be an object`},
		{"unknown field", `{"mcpx": {"hosts": {"h": {"timout": "60s"}}}}`, f + `mcpx.hosts.h.timout: unknown field (did you mean "timeout"?)`},
		{"bad timeout", `{"mcpx": {"hosts": {"h": {"timeout": "soon"}}}}`, f + `mcpx.hosts.h.timeout: invalid duration "soon" (want e.g. "90s", "5m", "1h30m", or a number of seconds)`},
		{"negative timeout", `{"mcpx": {"hosts": {"h": {"timeout": -1}}}}`, f + `mcpx.hosts.h.timeout: must not be negative`},
		{"reset not a bool", `{"mcpx": {"hosts": {"h": {"resetOnProgress": "yes"}}}}`, f + `mcpx.hosts.h.resetOnProgress: must be true or false`},
		{"duplicate host", `{"mcpx": {"hosts": {"h": {}, "h": {}}}}`, f + `mcpx.hosts.h: duplicate key`},
		{"duplicate field", `{"mcpx": {"hosts": {"h": {"timeout": 1, "timeout": 2}}}}`, f + `mcpx.hosts.h.timeout: duplicate key`},
		{"empty name", `{"mcpx": {"hosts": {"": {}}}}`, f + `mcpx.hosts[""]: must name a host by the clientInfo.name it sends`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(tc.data)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error = %v\nwant    %s", err, tc.want)
			}
		})
	}
}
