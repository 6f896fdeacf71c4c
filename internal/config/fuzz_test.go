package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse checks that Parse never panics, that its errors are single-line
// *Error values that keep secrets out, and that any accepted config, written
// back as a file, parses to the same Config.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"$schema": "x", "mcpServers": {}, "mcpx": {}}`,
		`{"mcpServers": {"demo": {"command": "mcpx", "args": ["demo"], "env": {"K": "${HOME}/x"}, "cwd": "/tmp",
			"idleTimeout": "2m", "maxTimeout": "1h", "startupTimeout": "30s", "protocolVersion": "auto", "disabled": false},
			"remote": {"type": "http", "url": "https://example.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}},
		  "mcpx": {"idleTimeout": "5m", "maxTimeout": 3600, "startupTimeout": "30s", "probeTimeout": 2.5,
			"toolNames": {"prefix": "auto", "separator": "."}, "maxMessageBytes": 16777216, "daemonIdleExit": "0", "maxConcurrentCalls": 4}}`,
		`{"mcpServers": {"s": {"command": "x", "maxConcurrentCalls": 2, "queueLength": 0, "queueTimeout": "1.5s"}},
		  "mcpx": {"maxConcurrentCalls": 0, "queueLength": 10, "queueTimeout": 0, "maxCallsPerHost": 3}}`,
		`{"mcpServers": {"s": {"type": "sse", "url": "http://h/${MISSING:-sse}", "protocolVersion": "2024-11-05", "disabled": true}}}`,
		`{"mcpServers": {"s": {"type": "stdio", "command": "$${x}", "args": ["$$${TOKEN}", "$", "${EMPTY:-d}"], "cwd": "rel/dir"}}}`,
		`{"mcpServers": {"s": {"command": "x", "comand": "y"}}}`,
		`{"mcpServers": {"a b": {"command": "x"}, "mcpx": {}}}`,
		`{"mcpx": {"idleTimeout": 1e-10, "maxTimeout": "-1s", "maxMessageBytes": 1023.5}}`,
		"{\n  \"mcpx\": {,}\n}",
		"\uFEFF[]",
		``,
	} {
		f.Add([]byte(seed))
	}
	opts := &LoadOptions{Lookup: testLookup}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, testFile, opts)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is %T, want *config.Error", err, err)
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\r\n") {
				t.Errorf("error %q is not one line", msg)
			}
			if strings.Contains(msg, "SECRET") && !bytes.Contains(data, []byte("SECRET")) {
				t.Errorf("error %q shows the secret", msg)
			}
			return
		}
		again, err := Parse(encode(t, c), testFile, opts)
		if err != nil {
			t.Fatalf("re-parsing an accepted config: %v\nconfig: %s", err, encode(t, c))
		}
		if diff := cmp.Diff(c, again); diff != "" {
			t.Fatalf("round trip mismatch (-first +again):\n%s", diff)
		}
	})
}

// encode writes c as a config file that parses back to c.
func encode(t *testing.T, c *Config) []byte {
	t.Helper()
	esc := func(s string) string { return strings.ReplaceAll(s, "${", "$${") }
	escMap := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = esc(v)
		}
		return out
	}
	servers := map[string]any{}
	for name, s := range c.Servers {
		e := map[string]any{
			"type":            string(s.Transport),
			"disabled":        s.Disabled,
			"protocolVersion": s.ProtocolVersion,
			"idleTimeout":     s.IdleTimeout.String(),
			"maxTimeout":      s.MaxTimeout.String(),
			"startupTimeout":  s.StartupTimeout.String(),

			"maxConcurrentCalls": s.MaxConcurrentCalls,
			"queueLength":        s.QueueLength,
			"queueTimeout":       s.QueueTimeout.String(),
		}
		if s.Transport == TransportStdio {
			args := []string{}
			for _, a := range s.Args {
				args = append(args, esc(a))
			}
			e["command"], e["args"], e["env"] = esc(s.Command), args, escMap(s.Env)
			if s.Cwd != "" {
				e["cwd"] = esc(s.Cwd)
			}
		} else {
			e["url"], e["headers"], e["maxConcurrentRequests"] = esc(s.URL), escMap(s.Headers), s.MaxConcurrentRequests
		}
		servers[name] = e
	}
	data, err := json.Marshal(map[string]any{
		"mcpServers": servers,
		"mcpx": map[string]any{
			"idleTimeout":        c.IdleTimeout.String(),
			"maxTimeout":         c.MaxTimeout.String(),
			"startupTimeout":     c.StartupTimeout.String(),
			"probeTimeout":       c.ProbeTimeout.String(),
			"toolNames":          map[string]string{"prefix": string(c.ToolNames.Prefix), "separator": c.ToolNames.Separator},
			"maxMessageBytes":    c.MaxMessageBytes,
			"daemonIdleExit":     c.DaemonIdleExit.String(),
			"maxConcurrentCalls": c.MaxConcurrentCalls,
			"queueLength":        c.QueueLength,
			"queueTimeout":       c.QueueTimeout.String(),
			"maxCallsPerHost":    c.MaxCallsPerHost,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}
