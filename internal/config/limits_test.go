package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCallLimits: the global call limits are what a server inherits; a
// server's own fields override them one by one, on every transport; 0 is
// a value ("no limit", "no queue", "no timer"), not "unset".
func TestCallLimits(t *testing.T) {
	def := CallLimits{MaxConcurrentCalls: 64, QueueLength: 256, QueueTimeout: time.Minute}
	tests := []struct {
		name, data  string
		global      CallLimits
		perHost     int
		wantServers map[string]CallLimits
	}{
		{
			name:        "defaults",
			data:        `{"mcpServers": {"a": {"command": "x"}, "h": {"url": "http://h"}}}`,
			global:      def,
			perHost:     256,
			wantServers: map[string]CallLimits{"a": def, "h": def},
		},
		{
			name: "globals inherited",
			data: `{"mcpx": {"maxConcurrentCalls": 4, "queueLength": 8, "queueTimeout": "2s", "maxCallsPerHost": 10},
				"mcpServers": {"a": {"command": "x"}, "s": {"type": "sse", "url": "http://h"}}}`,
			global:  CallLimits{4, 8, 2 * time.Second},
			perHost: 10,
			wantServers: map[string]CallLimits{
				"a": {4, 8, 2 * time.Second},
				"s": {4, 8, 2 * time.Second},
			},
		},
		{
			name: "server overrides one by one",
			data: `{"mcpx": {"maxConcurrentCalls": 4, "queueLength": 8, "queueTimeout": 2},
				"mcpServers": {
					"a": {"command": "x", "maxConcurrentCalls": 1},
					"b": {"command": "x", "queueLength": 0},
					"c": {"url": "http://h", "queueTimeout": "250ms", "maxConcurrentRequests": 2},
					"d": {"command": "x", "maxConcurrentCalls": 0, "queueLength": 3, "queueTimeout": 0}}}`,
			global:  CallLimits{4, 8, 2 * time.Second},
			perHost: 256,
			wantServers: map[string]CallLimits{
				"a": {1, 8, 2 * time.Second},
				"b": {4, 0, 2 * time.Second},
				"c": {4, 8, 250 * time.Millisecond},
				"d": {0, 3, 0},
			},
		},
		{
			name:        "zeros mean off",
			data:        `{"mcpx": {"maxConcurrentCalls": 0, "queueLength": 0, "queueTimeout": "0s", "maxCallsPerHost": 0}, "mcpServers": {"a": {"command": "x"}}}`,
			wantServers: map[string]CallLimits{"a": {}},
		},
		{
			name:        "largest values",
			data:        `{"mcpx": {"maxConcurrentCalls": 1000000, "queueLength": 1000000, "maxCallsPerHost": 1000000}, "mcpServers": {"a": {"command": "x"}}}`,
			global:      CallLimits{1_000_000, 1_000_000, time.Minute},
			perHost:     1_000_000,
			wantServers: map[string]CallLimits{"a": {1_000_000, 1_000_000, time.Minute}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parse(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.callLimits(); got != tt.global {
				t.Errorf("global limits = %+v, want %+v", got, tt.global)
			}
			if c.MaxCallsPerHost != tt.perHost {
				t.Errorf("MaxCallsPerHost = %d, want %d", c.MaxCallsPerHost, tt.perHost)
			}
			got := map[string]CallLimits{}
			for name, s := range c.Servers {
				got[name] = s.CallLimits
			}
			if diff := cmp.Diff(tt.wantServers, got); diff != "" {
				t.Errorf("server limits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCallLimitErrors(t *testing.T) {
	const f = "config " + testFile + ": "
	tests := []parseErrorCase{
		{"global maxConcurrentCalls too large", `{"mcpx": {"maxConcurrentCalls": 1000001}}`, f + `mcpx.maxConcurrentCalls: must be an integer between 0 and 1000000`},
		{"global queueLength negative", `{"mcpx": {"queueLength": -1}}`, f + `mcpx.queueLength: must be an integer between 0 and 1000000`},
		{"global queueLength fractional", `{"mcpx": {"queueLength": 1.5}}`, f + `mcpx.queueLength: must be an integer between 0 and 1000000`},
		{"global queueLength string", `{"mcpx": {"queueLength": "10"}}`, f + `mcpx.queueLength: must be an integer between 0 and 1000000`},
		{"global queueTimeout negative", `{"mcpx": {"queueTimeout": "-1s"}}`, f + `mcpx.queueTimeout: must not be negative`},
		{"global queueTimeout no unit", `{"mcpx": {"queueTimeout": "30"}}`, f + `mcpx.queueTimeout: invalid duration "30": missing unit (want e.g. "30s", or the number 30 without quotes for seconds)`},
		{"maxCallsPerHost too large", `{"mcpx": {"maxCallsPerHost": 2000000}}`, f + `mcpx.maxCallsPerHost: must be an integer between 0 and 1000000`},
		{"maxCallsPerHost bool", `{"mcpx": {"maxCallsPerHost": true}}`, f + `mcpx.maxCallsPerHost: must be an integer between 0 and 1000000`},
		{"maxCallsPerHost typo", `{"mcpx": {"maxCallPerHost": 1}}`, f + `mcpx.maxCallPerHost: unknown field (did you mean "maxCallsPerHost"?)`},
		{"server maxConcurrentCalls negative", srv(`{"command": "x", "maxConcurrentCalls": -2}`), f + `mcpServers.s.maxConcurrentCalls: must be an integer between 0 and 1000000`},
		{"server queueLength too large", srv(`{"url": "http://h", "queueLength": 1e7}`), f + `mcpServers.s.queueLength: must be an integer between 0 and 1000000`},
		{"server queueTimeout type", srv(`{"type": "sse", "url": "http://h", "queueTimeout": [1]}`), f + `mcpServers.s.queueTimeout: must be a duration such as "90s" or "5m", or a number of seconds`},
		{"server field typo", srv(`{"command": "x", "queueLenght": 1}`), f + `mcpServers.s.queueLenght: unknown field (did you mean "queueLength"?)`},
		{"per-host limit is global only", srv(`{"command": "x", "maxCallsPerHost": 1}`), f + `mcpServers.s.maxCallsPerHost: unknown field`},
	}
	checkParseErrors(t, tests)
}

// TestSameUpstream: servers that differ only in their call limits are the
// same upstream (a reload keeps it running); any other difference is not.
func TestSameUpstream(t *testing.T) {
	base := func() *Server {
		return &Server{Name: "s", Transport: TransportStdio, Command: "x", Args: []string{"a"}, Env: map[string]string{"K": "v"},
			IdleTimeout: time.Minute, MaxTimeout: time.Hour, StartupTimeout: time.Second,
			CallLimits: CallLimits{MaxConcurrentCalls: 4, QueueLength: 8, QueueTimeout: time.Second}}
	}
	tests := []struct {
		name string
		edit func(s *Server)
		same bool
	}{
		{"identical", func(*Server) {}, true},
		{"limit", func(s *Server) { s.MaxConcurrentCalls = 1 }, true},
		{"queue", func(s *Server) { s.QueueLength, s.QueueTimeout = 0, 0 }, true},
		{"all limits", func(s *Server) { s.CallLimits = CallLimits{} }, true},
		{"command", func(s *Server) { s.Command = "y" }, false},
		{"args", func(s *Server) { s.Args = []string{"b"} }, false},
		{"env", func(s *Server) { s.Env = nil }, false},
		{"limits and args", func(s *Server) { s.MaxConcurrentCalls, s.Args = 9, nil }, false},
		{"disabled", func(s *Server) { s.Disabled = true }, false},
		{"perHost", func(s *Server) { s.PerHost = true }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := base(), base()
			tt.edit(b)
			if got := a.SameUpstream(b); got != tt.same {
				t.Errorf("SameUpstream = %v, want %v", got, tt.same)
			}
			if got := b.SameUpstream(a); got != tt.same {
				t.Errorf("SameUpstream (reversed) = %v, want %v", got, tt.same)
			}
			if len(a.Args) != 1 || a.Args[0] != "a" || a.MaxConcurrentCalls != 4 {
				t.Errorf("SameUpstream changed its receiver: %+v", a)
			}
		})
	}
}
