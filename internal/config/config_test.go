package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testFile names the config in tests; relative cwd values resolve to /etc/mcpx.
const testFile = "/etc/mcpx/config.json"

// testEnv is the environment ${VAR} references see in tests.
var testEnv = map[string]string{
	"HOME":  "/home/u",
	"TOKEN": "tok-SECRET-123",
	"EMPTY": "",
}

func testLookup(name string) (string, bool) {
	v, ok := testEnv[name]
	return v, ok
}

func parse(data string) (*Config, error) {
	return Parse([]byte(data), testFile, &LoadOptions{Lookup: testLookup})
}

func TestParseExample(t *testing.T) {
	got, err := parse(`{
  "$schema": "https://example.test/schema.json",
  "mcpServers": {
    "demo":   {"command": "mcpx", "args": ["demo"], "env": {"K": "${HOME}/x"}, "cwd": "/tmp",
               "idleTimeout": "2m", "maxTimeout": "1h", "startupTimeout": "30s", "protocolVersion": "auto", "disabled": false},
    "remote": {"type": "http", "url": "https://example.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "maxConcurrentRequests": 4},
    "old":    {"type": "sse", "url": "http://localhost:8080/sse", "protocolVersion": "2024-11-05", "disabled": true},
    "rel":    {"type": "stdio", "command": "./srv", "cwd": "sub/dir", "args": []}
  },
  "mcpx": {
    "idleTimeout": "10m", "maxTimeout": 7200, "startupTimeout": "45s", "probeTimeout": 1.5,
    "toolNames": {"prefix": "auto", "separator": "."},
    "maxMessageBytes": 1048576,
    "daemonIdleExit": 0,
    "maxConcurrentCalls": 8
  }
}`)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		File: testFile,
		Servers: map[string]*Server{
			"demo": {
				Name: "demo", Transport: TransportStdio,
				Command: "mcpx", Args: []string{"demo"}, Env: map[string]string{"K": "/home/u/x"}, Cwd: "/tmp",
				IdleTimeout: 2 * time.Minute, MaxTimeout: time.Hour, StartupTimeout: 30 * time.Second,
				CallLimits: CallLimits{MaxConcurrentCalls: 8, QueueLength: 256, QueueTimeout: time.Minute},
			},
			"remote": {
				Name: "remote", Transport: TransportHTTP,
				URL: "https://example.test/mcp", Headers: map[string]string{"Authorization": "Bearer tok-SECRET-123"}, MaxConcurrentRequests: 4,
				IdleTimeout: 10 * time.Minute, MaxTimeout: 2 * time.Hour, StartupTimeout: 45 * time.Second,
				CallLimits: CallLimits{MaxConcurrentCalls: 8, QueueLength: 256, QueueTimeout: time.Minute},
			},
			"old": {
				Name: "old", Transport: TransportSSE, Disabled: true,
				URL: "http://localhost:8080/sse", ProtocolVersion: "2024-11-05", MaxConcurrentRequests: 16,
				IdleTimeout: 10 * time.Minute, MaxTimeout: 2 * time.Hour, StartupTimeout: 45 * time.Second,
				CallLimits: CallLimits{MaxConcurrentCalls: 8, QueueLength: 256, QueueTimeout: time.Minute},
			},
			"rel": {
				Name: "rel", Transport: TransportStdio, Command: "./srv", Cwd: "/etc/mcpx/sub/dir",
				IdleTimeout: 10 * time.Minute, MaxTimeout: 2 * time.Hour, StartupTimeout: 45 * time.Second,
				CallLimits: CallLimits{MaxConcurrentCalls: 8, QueueLength: 256, QueueTimeout: time.Minute},
			},
		},
		IdleTimeout:        10 * time.Minute,
		MaxTimeout:         2 * time.Hour,
		StartupTimeout:     45 * time.Second,
		ProbeTimeout:       1500 * time.Millisecond,
		ToolNames:          ToolNames{Prefix: PrefixAuto, Separator: "."},
		MaxMessageBytes:    1 << 20,
		DaemonIdleExit:     0,
		MaxConcurrentCalls: 8,
		QueueLength:        256,
		QueueTimeout:       time.Minute,
		MaxCallsPerHost:    256,
		Jobs:               defaultJobs,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
	if got, want := got.Names(), []string{"demo", "old", "rel", "remote"}; !cmp.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
}

func TestParseDefaults(t *testing.T) {
	tests := []struct {
		name, data string
		want       *Config
	}{
		{"empty object", `{}`, &Config{File: testFile, Servers: map[string]*Server{},
			IdleTimeout: 5 * time.Minute, MaxTimeout: time.Hour, StartupTimeout: 30 * time.Second, ProbeTimeout: 3 * time.Second,
			ToolNames: ToolNames{Prefix: PrefixAlways, Separator: "__"}, MaxMessageBytes: 16 << 20, DaemonIdleExit: 30 * time.Minute,
			MaxConcurrentCalls: 64, QueueLength: 256, QueueTimeout: time.Minute, MaxCallsPerHost: 256, Jobs: defaultJobs}},
		{"servers inherit defaults", `{"mcpServers": {"a": {"url": "http://x"}}}`, &Config{File: testFile,
			Servers: map[string]*Server{"a": {Name: "a", Transport: TransportHTTP, URL: "http://x", MaxConcurrentRequests: 16,
				IdleTimeout: 5 * time.Minute, MaxTimeout: time.Hour, StartupTimeout: 30 * time.Second,
				CallLimits: CallLimits{MaxConcurrentCalls: 64, QueueLength: 256, QueueTimeout: time.Minute}}},
			IdleTimeout: 5 * time.Minute, MaxTimeout: time.Hour, StartupTimeout: 30 * time.Second, ProbeTimeout: 3 * time.Second,
			ToolNames: ToolNames{Prefix: PrefixAlways, Separator: "__"}, MaxMessageBytes: 16 << 20, DaemonIdleExit: 30 * time.Minute,
			MaxConcurrentCalls: 64, QueueLength: 256, QueueTimeout: time.Minute, MaxCallsPerHost: 256, Jobs: defaultJobs}},
		{"server overrides one, inherits global others", `{"mcpx": {"maxTimeout": "2h"},
			"mcpServers": {"a": {"command": "x", "idleTimeout": 0, "startupTimeout": "1s", "protocolVersion": ""}}}`, &Config{File: testFile,
			Servers: map[string]*Server{"a": {Name: "a", Transport: TransportStdio, Command: "x",
				IdleTimeout: 0, MaxTimeout: 2 * time.Hour, StartupTimeout: time.Second,
				CallLimits: CallLimits{MaxConcurrentCalls: 64, QueueLength: 256, QueueTimeout: time.Minute}}},
			IdleTimeout: 5 * time.Minute, MaxTimeout: 2 * time.Hour, StartupTimeout: 30 * time.Second, ProbeTimeout: 3 * time.Second,
			ToolNames: ToolNames{Prefix: PrefixAlways, Separator: "__"}, MaxMessageBytes: 16 << 20, DaemonIdleExit: 30 * time.Minute,
			MaxConcurrentCalls: 64, QueueLength: 256, QueueTimeout: time.Minute, MaxCallsPerHost: 256, Jobs: defaultJobs}},
		{"streamable-http and empty maps", "\uFEFF" + `{"mcpServers": {"a": {"type": "streamable-http", "url": "https://h:8443/p?q=1", "headers": {}}}}`,
			&Config{File: testFile,
				Servers: map[string]*Server{"a": {Name: "a", Transport: TransportHTTP, URL: "https://h:8443/p?q=1", MaxConcurrentRequests: 16,
					IdleTimeout: 5 * time.Minute, MaxTimeout: time.Hour, StartupTimeout: 30 * time.Second,
					CallLimits: CallLimits{MaxConcurrentCalls: 64, QueueLength: 256, QueueTimeout: time.Minute}}},
				IdleTimeout: 5 * time.Minute, MaxTimeout: time.Hour, StartupTimeout: 30 * time.Second, ProbeTimeout: 3 * time.Second,
				ToolNames: ToolNames{Prefix: PrefixAlways, Separator: "__"}, MaxMessageBytes: 16 << 20, DaemonIdleExit: 30 * time.Minute,
				MaxConcurrentCalls: 64, QueueLength: 256, QueueTimeout: time.Minute, MaxCallsPerHost: 256, Jobs: defaultJobs}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProtocolVersions(t *testing.T) {
	for _, v := range append([]string{"", "auto"}, KnownProtocolVersions...) {
		t.Run(v, func(t *testing.T) {
			c, err := parse(`{"mcpServers": {"a": {"command": "x", "protocolVersion": "` + v + `"}}}`)
			if err != nil {
				t.Fatal(err)
			}
			want := v
			if v == "auto" {
				want = ""
			}
			if got := c.Servers["a"].ProtocolVersion; got != want {
				t.Errorf("ProtocolVersion = %q, want %q", got, want)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	got := Default("/usr/bin/mcpx")
	want := defaults()
	want.Servers["demo"] = &Server{Name: "demo", Transport: TransportStdio, Command: "/usr/bin/mcpx", Args: []string{"demo"},
		IdleTimeout: 5 * time.Minute, MaxTimeout: time.Hour, StartupTimeout: 30 * time.Second,
		CallLimits: CallLimits{MaxConcurrentCalls: 64, QueueLength: 256, QueueTimeout: time.Minute}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Default mismatch (-want +got):\n%s", diff)
	}
	if got.File != "" {
		t.Errorf("File = %q, want \"\"", got.File)
	}
	// The default is what an equivalent file gives.
	fromFile, err := Parse([]byte(`{"mcpServers": {"demo": {"command": "/usr/bin/mcpx", "args": ["demo"]}}}`), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fromFile, got); diff != "" {
		t.Errorf("Default differs from the equivalent file (-file +default):\n%s", diff)
	}
}

var defaultJobs = Jobs{Retention: 24 * time.Hour, MaxResultBytes: 4 << 20, TaskAfter: time.Second}

func TestParseJobs(t *testing.T) {
	c, err := Parse([]byte(`{"mcpx":{"jobs":{"retention":"2h","maxResultBytes":65536}},"mcpServers":{}}`), "x.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Jobs != (Jobs{Retention: 2 * time.Hour, MaxResultBytes: 65536, TaskAfter: time.Second}) {
		t.Fatalf("jobs %+v", c.Jobs)
	}
	for _, bad := range []string{`{"retention":"0s"}`, `{"maxResultBytes":10}`, `{"keep":"1h"}`} {
		if _, err := Parse([]byte(`{"mcpx":{"jobs":`+bad+`},"mcpServers":{}}`), "x.json", nil); err == nil || !strings.Contains(err.Error(), "mcpx.jobs") {
			t.Errorf("%s: %v, want an error naming mcpx.jobs", bad, err)
		}
	}
}

func TestParseJobsTasks(t *testing.T) {
	c, err := Parse([]byte(`{"mcpx":{"jobs":{"taskMaxTtl":"1h","taskPollInterval":"250ms","taskAfter":"0s"}},
		"mcpServers":{"s":{"command":"x","taskTools":{"a":"required","b":"forbidden"}}}}`), "x.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Jobs.TaskMaxTTL != time.Hour || c.Jobs.TaskPollInterval != 250*time.Millisecond || c.Jobs.Retention != 24*time.Hour || c.Jobs.TaskAfter != 0 {
		t.Fatalf("jobs %+v", c.Jobs)
	}
	if s := c.Servers["s"]; s.TaskSupport("a") != TaskRequired || s.TaskSupport("b") != TaskForbidden || s.TaskSupport("c") != TaskOptional {
		t.Fatalf("taskTools %v", s.TaskTools)
	}
	for _, bad := range []string{`["a"]`, `{"a":"sometimes"}`, `{"a":true}`} {
		if _, err := Parse([]byte(`{"mcpServers":{"s":{"command":"x","taskTools":`+bad+`}}}`), "x.json", nil); err == nil || !strings.Contains(err.Error(), "taskTools") {
			t.Errorf("taskTools %s: %v, want an error naming taskTools", bad, err)
		}
	}
	for _, bad := range []string{`{"taskMaxTtl":"0s"}`, `{"taskPollInterval":"10us"}`, `{"taskPollInterval":"soon"}`} {
		if _, err := Parse([]byte(`{"mcpx":{"jobs":`+bad+`},"mcpServers":{}}`), "x.json", nil); err == nil || !strings.Contains(err.Error(), "mcpx.jobs.task") {
			t.Errorf("%s: %v, want an error naming the key", bad, err)
		}
	}
}
