package config

import (
	"strings"
	"testing"
)

func TestToolFilterSemantics(t *testing.T) {
	cfg, err := Parse([]byte(`{"mcpx": {"hosts": {
		"claude-code": {"tools": ["files__*", "!files__delete_*"]},
		"deny-only":   {"tools": ["!files__delete_*", "!shell__*"]},
		"reallow":     {"tools": ["!files__*", "files__read"]},
		"none":        {"tools": ["!*"]},
		"odd":         {"tools": ["a?c", "x*y*z"]}
	}}}`), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		host, tool string
		ok         bool
		why        string
	}{
		{"claude-code", "files__read", true, `rule "files__*" (mcpx.hosts.claude-code.tools[0])`},
		{"claude-code", "files__delete_all", false, `rule "!files__delete_*" (mcpx.hosts.claude-code.tools[1])`},
		{"claude-code", "shell__run", false, "no rule of mcpx.hosts.claude-code.tools allows it"},
		{"deny-only", "shell__run", false, `rule "!shell__*" (mcpx.hosts.deny-only.tools[1])`},
		{"deny-only", "git__log", true, ""},
		{"reallow", "files__read", true, `rule "files__read" (mcpx.hosts.reallow.tools[1])`},
		{"reallow", "files__write", false, `rule "!files__*" (mcpx.hosts.reallow.tools[0])`},
		{"reallow", "git__log", true, ""},
		{"none", "git__log", false, `rule "!*" (mcpx.hosts.none.tools[0])`},
		{"odd", "abc", true, `rule "a?c" (mcpx.hosts.odd.tools[0])`},
		{"odd", "ac", false, "no rule of mcpx.hosts.odd.tools allows it"},
		{"odd", "x__y__z", true, `rule "x*y*z" (mcpx.hosts.odd.tools[1])`},
		{"odd", "xyzq", false, "no rule of mcpx.hosts.odd.tools allows it"},
	}
	for _, tc := range cases {
		f := cfg.HostTools(tc.host)
		ok, why := f.Allows(tc.tool)
		if ok != tc.ok || why != tc.why {
			t.Errorf("%s %s: got %v %q, want %v %q", tc.host, tc.tool, ok, why, tc.ok, tc.why)
		}
	}
	if f := cfg.HostTools("", "nobody"); f != nil {
		t.Errorf("a host with no entry got filter %v", f.Patterns)
	}
	if f := cfg.HostTools("deny-only", "claude-code"); f == nil || f.Path != "mcpx.hosts.deny-only.tools" {
		t.Errorf("the token name must come first; got %+v", f)
	}
	if ok, _ := (*ToolFilter)(nil).Allows("anything"); !ok {
		t.Error("no filter refused a tool")
	}
}

func TestToolFilterErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"mcpx": {"hosts": {"h": {"tools": "files__*"}}}}`, "mcpx.hosts.h.tools: must be an array of tool name patterns"},
		{`{"mcpx": {"hosts": {"h": {"tools": []}}}}`, "mcpx.hosts.h.tools: is empty"},
		{`{"mcpx": {"hosts": {"h": {"tools": ["ok", "!"]}}}}`, "mcpx.hosts.h.tools[1]: must be a tool name pattern"},
		{`{"mcpx": {"hosts": {"h": {"tools": [""]}}}}`, "mcpx.hosts.h.tools[0]: must be a tool name pattern"},
		{`{"mcpx": {"hosts": {"h": {"tools": [1]}}}}`, "mcpx.hosts.h.tools[0]"},
		{`{"mcpx": {"hosts": {"h": {"tool": ["x"]}}}}`, "mcpx.hosts.h.tool: unknown field"},
		{`{"mcpx": {"hosts": {"": {"tools": ["x"]}}}}`, "must name a host"},
		{`{"mcpx": {"hosts": []}}`, "mcpx.hosts"},
	} {
		_, err := Parse([]byte(tc.in), "", nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

func FuzzGlob(f *testing.F) {
	f.Add("files__*", "files__read")
	f.Add("a*b*c", "aXbYc")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if glob(pattern, name) != globSlow(pattern, name) {
			t.Errorf("glob(%q, %q) = %v, the recursive matcher says otherwise", pattern, name, glob(pattern, name))
		}
	})
}

// globSlow is the obvious recursive matcher, to check glob against.
func globSlow(p, n string) bool {
	if p == "" {
		return n == ""
	}
	switch p[0] {
	case '*':
		for len(p) > 1 && p[1] == '*' {
			p = p[1:] // a run of stars is one: else this check is exponential in it
		}
		for i := 0; i <= len(n); i++ {
			if globSlow(p[1:], n[i:]) {
				return true
			}
		}
		return false
	case '?':
		return n != "" && globSlow(p[1:], n[1:])
	}
	return n != "" && n[0] == p[0] && globSlow(p[1:], n[1:])
}

// TestHostTimerAndTools: one host's entry may hold its timer and its
// tool filter together.
func TestHostTimerAndTools(t *testing.T) {
	cfg, err := Parse([]byte(`{"mcpx": {"hosts": {"claude-code": {"timeout": "2m", "resetOnProgress": true, "tools": ["files__*"]}}}}`), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	h := cfg.Hosts["claude-code"]
	if h.Timeout == nil || h.Timeout.String() != "2m0s" || h.ResetOnProgress == nil || !*h.ResetOnProgress || h.Tools == nil || h.Tools.Patterns[0] != "files__*" {
		t.Errorf("got %+v", h)
	}
	if f := cfg.HostTools("claude-code"); f != h.Tools {
		t.Errorf("HostTools: %+v", f)
	}
	// A timer-only entry has no filter: every tool.
	cfg, err = Parse([]byte(`{"mcpx": {"hosts": {"opencode": {"timeout": "5m"}}}}`), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := cfg.HostTools("opencode"); f != nil {
		t.Errorf("a timer-only entry filters tools: %+v", f)
	}
}
