package catalog

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"mcpx/internal/config"
	"mcpx/internal/upstream"
)

// newCatalog returns a catalog over a pool of servers that are never
// started: the pool only reads their names from the config.
func newCatalog(t *testing.T, naming Naming, servers ...string) *Catalog {
	t.Helper()
	cfg := &config.Config{Servers: map[string]*config.Server{
		"off":    {Name: "off", Transport: config.TransportStdio, Command: "/nonexistent", Disabled: true},
		"remote": {Name: "remote", Transport: config.TransportHTTP, URL: "http://127.0.0.1:1/mcp"},
	}}
	for _, s := range servers {
		cfg.Servers[s] = &config.Server{Name: s, Transport: config.TransportStdio, Command: "/nonexistent"}
	}
	return New(upstream.NewPool(cfg, nil), naming, nil)
}

func TestNewDefaults(t *testing.T) {
	c := newCatalog(t, Naming{})
	if c.naming.Prefix != "always" || c.naming.Separator != "__" {
		t.Errorf("got naming %+v, want prefix always and separator __", c.naming)
	}
	if c.log == nil {
		t.Error("got a nil logger, want one that discards")
	}
}

func TestExposedName(t *testing.T) {
	long := strings.Repeat("t", 70)
	tests := []struct {
		name     string
		naming   Naming
		server   string
		tool     string
		collides bool
		want     string
	}{
		{"always", Naming{Prefix: "always", Separator: "__"}, "git", "status", false, "git__status"},
		{"always, other separator", Naming{Prefix: "always", Separator: "."}, "git", "status", false, "git.status"},
		{"always, collision", Naming{Prefix: "always", Separator: "__"}, "git", "status", true, "git__status"},
		{"auto, unique", Naming{Prefix: "auto", Separator: "__"}, "git", "status", false, "status"},
		{"auto, collision", Naming{Prefix: "auto", Separator: "__"}, "git", "status", true, "git__status"},
		{"auto, reserved mcpx_search", Naming{Prefix: "auto", Separator: "__"}, "git", "mcpx_search", false, "git__mcpx_search"},
		{"auto, reserved mcpx_call", Naming{Prefix: "auto", Separator: "-"}, "git", "mcpx_call", false, "git-mcpx_call"},
		{"auto, not reserved", Naming{Prefix: "auto", Separator: "__"}, "git", "mcpx_other", false, "mcpx_other"},
		{"exactly 64", Naming{Prefix: "always", Separator: "__"}, "srv", strings.Repeat("x", 59), false, "srv__" + strings.Repeat("x", 59)},
		{"auto, exactly 64 bare", Naming{Prefix: "auto", Separator: "__"}, "srv", strings.Repeat("x", 64), false, strings.Repeat("x", 64)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCatalog(t, tt.naming)
			if got := c.exposedName(tt.server, tt.tool, tt.collides); got != tt.want {
				t.Errorf("exposedName(%q, %q, %v) = %q, want %q", tt.server, tt.tool, tt.collides, got, tt.want)
			}
		})
	}

	t.Run("shortened", func(t *testing.T) {
		for _, tc := range []struct {
			naming       Naming
			server, tool string
		}{
			{Naming{Prefix: "always", Separator: "__"}, "srv", long},
			{Naming{Prefix: "auto", Separator: "__"}, "srv", long},
			{Naming{Prefix: "always", Separator: "__"}, "srv", strings.Repeat("x", 60)}, // 65 bytes
			{Naming{Prefix: "always", Separator: "."}, strings.Repeat("s", 48), long},
		} {
			c := newCatalog(t, tc.naming)
			full := tc.server + tc.naming.Separator + tc.tool
			if tc.naming.Prefix == "auto" {
				full = tc.tool
			}
			got := c.exposedName(tc.server, tc.tool, false)
			if len(got) != MaxNameLen {
				t.Errorf("exposedName(%q, %q): got %d bytes, want %d", tc.server, tc.tool, len(got), MaxNameLen)
			}
			const suffixLen = 9 // "_" and 8 hex digits
			if !strings.HasPrefix(full, got[:MaxNameLen-suffixLen]) {
				t.Errorf("exposedName(%q, %q) = %q, want it to start with %q", tc.server, tc.tool, got, full[:MaxNameLen-suffixLen])
			}
			suffix := got[MaxNameLen-suffixLen:]
			if suffix[0] != '_' || strings.Trim(suffix[1:], "0123456789abcdef") != "" {
				t.Errorf("exposedName(%q, %q) = %q, want a _<8 hex> suffix, got %q", tc.server, tc.tool, got, suffix)
			}
			if again := c.exposedName(tc.server, tc.tool, false); again != got {
				t.Errorf("exposedName is not deterministic: %q then %q", got, again)
			}
			if _, _, ok := c.Route(got); ok {
				t.Errorf("Route(%q) routed a shortened name", got)
			}
		}
	})

	t.Run("shortened names differ", func(t *testing.T) {
		c := newCatalog(t, Naming{Prefix: "always", Separator: "__"})
		seen := map[string]string{}
		for _, tool := range []string{long + "a", long + "b", long + "c", long} {
			got := c.exposedName("srv", tool, false)
			if other, dup := seen[got]; dup {
				t.Errorf("tools %q and %q share the exposed name %q", other, tool, got)
			}
			seen[got] = tool
		}
		// The same tool on another server is another name.
		if a, b := c.exposedName("a", long, false), c.exposedName("b", long, false); a == b {
			t.Errorf("servers a and b share the exposed name %q", a)
		}
	})

	t.Run("shortened at a character boundary", func(t *testing.T) {
		c := newCatalog(t, Naming{Prefix: "always", Separator: "__"})
		for pad := range 4 {
			tool := strings.Repeat("x", pad) + strings.Repeat("é", 40)
			got := c.exposedName("srv", tool, false)
			if !utf8.ValidString(got) {
				t.Errorf("exposedName(srv, %q) = %q, not valid UTF-8", tool, got)
			}
			if len(got) != MaxNameLen {
				t.Errorf("exposedName(srv, %q) is %d bytes, want %d", tool, len(got), MaxNameLen)
			}
			if _, _, ok := c.Route(got); ok {
				t.Errorf("Route(%q) routed a shortened name", got)
			}
			if again := c.exposedName("srv", tool, false); again != got {
				t.Errorf("exposedName is not deterministic: %q then %q", got, again)
			}
		}
	})
}

func TestRenamed(t *testing.T) {
	tests := []struct {
		name string
		def  string
		to   string
		want string
	}{
		{
			name: "every other byte kept",
			def:  `{"name":"status","description":"Shows \"status\" }{","inputSchema":{"type":"object", "properties":{"n":{"default":1.50}}},"x-extra":[1e400]}`,
			to:   "git__status",
			want: `{"name":"git__status","description":"Shows \"status\" }{","inputSchema":{"type":"object", "properties":{"n":{"default":1.50}}},"x-extra":[1e400]}`,
		},
		{
			name: "name not first",
			def:  `{"title":"T","name":"a","annotations":{"readOnlyHint":true}}`,
			to:   "s__a",
			want: `{"title":"T","name":"s__a","annotations":{"readOnlyHint":true}}`,
		},
		{
			name: "no name member: appended",
			def:  `{"description":"d"}`,
			to:   "s__a",
			want: `{"description":"d","name":"s__a"}`,
		},
		{
			name: "a name needing escapes",
			def:  `{"name":"a"}`,
			to:   `s__"a"`,
			want: `{"name":"s__\"a\""}`,
		},
		{
			name: "not an object: unchanged",
			def:  `[1,2]`,
			to:   "s__a",
			want: `[1,2]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(renamed(json.RawMessage(tt.def), tt.to)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestInputSchema(t *testing.T) {
	tool := &Tool{up: upstream.Tool{Raw: json.RawMessage(`{"name":"a","inputSchema":{"type":"object",  "required":["x"]}}`)}}
	if got, want := string(tool.InputSchema()), `{"type":"object",  "required":["x"]}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := (&Tool{up: upstream.Tool{Raw: json.RawMessage(`{"name":"a"}`)}}).InputSchema(); got != nil {
		t.Errorf("got %s for a tool without a schema, want nil", got)
	}
	if got := (&Tool{up: upstream.Tool{Raw: json.RawMessage(`"x"`)}}).InputSchema(); got != nil {
		t.Errorf("got %s for a malformed definition, want nil", got)
	}
}

func TestRoute(t *testing.T) {
	servers := []string{"git", "gitlab", "a", "a_", "files"}
	tests := []struct {
		name   string
		sep    string
		in     string
		server string
		tool   string
		ok     bool
	}{
		{"prefixed", "__", "git__status", "git", "status", true},
		{"another server sharing a prefix", "__", "gitlab__issues", "gitlab", "issues", true},
		{"the tool may contain the separator", "__", "git__log__all", "git", "log__all", true},
		{"the tool may start with another server's name", "__", "files__git__log", "files", "git__log", true},
		{"two servers fit: the listing decides", "__", "a___x", "", "", false},
		{"bare name", "__", "status", "", "", false},
		{"unknown server", "__", "svn__status", "", "", false},
		{"disabled server", "__", "off__status", "", "", false},
		{"a server alone", "__", "git__", "", "", false},
		{"a server without separator", "__", "git", "", "", false},
		{"half a separator", "__", "git_status", "", "", false},
		{"the separator first", "__", "__git", "", "", false},
		{"empty name", "__", "", "", "", false},
		{"a server name's prefix", "__", "gi__x", "", "", false},
		{"case matters", "__", "GIT__status", "", "", false},
		{"one-character separator", ".", "git.status", "git", "status", true},
		{"one-character separator, bare", ".", "status", "", "", false},
		{"63 bytes", "__", "git__" + strings.Repeat("x", 58), "git", strings.Repeat("x", 58), true},
		{"64 bytes may be shortened", "__", "git__" + strings.Repeat("x", 59), "", "", false},
		{"65 bytes is never shortened", "__", "git__" + strings.Repeat("x", 60), "git", strings.Repeat("x", 60), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCatalog(t, Naming{Prefix: "always", Separator: tt.sep}, servers...)
			server, tool, ok := c.Route(tt.in)
			if server != tt.server || tool != tt.tool || ok != tt.ok {
				t.Errorf("Route(%q) = %q, %q, %v; want %q, %q, %v", tt.in, server, tool, ok, tt.server, tt.tool, tt.ok)
			}
		})
	}
}

func TestHasServer(t *testing.T) {
	c := newCatalog(t, Naming{}, "git", "files")
	for name, want := range map[string]bool{"git": true, "files": true, "off": false, "nope": false, "": false} {
		if got := c.HasServer(name); got != want {
			t.Errorf("HasServer(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestSnapshotLookup(t *testing.T) {
	tool := &Tool{Name: "git__status", Server: "git", Tool: "status"}
	s := &Snapshot{Tools: []*Tool{tool}, byName: map[string]*Tool{tool.Name: tool}}
	if got, ok := s.Lookup("git__status"); !ok || got != tool {
		t.Errorf("Lookup(git__status) = %v, %v; want the tool", got, ok)
	}
	if got, ok := s.Lookup("status"); ok {
		t.Errorf("Lookup(status) = %v, want none", got)
	}
}

// TestCollisionListingAndRoutingAgree: server a's tool "_x" and server
// a_'s tool "x" are both a___x. The listing shows a's, and routing the
// name finds a's too (or leaves it to the listing), never a_'s; the
// collision is reported, with the way out, and logged once.
func TestCollisionListingAndRoutingAgree(t *testing.T) {
	var log strings.Builder
	c := newCatalog(t, Naming{Prefix: "always", Separator: "__"}, "a", "a_", "b")
	c.log = slog.New(slog.NewTextHandler(&log, nil))
	lists := [][]upstream.Tool{{{Name: "_x", Raw: json.RawMessage(`{"name":"_x"}`)}}, {{Name: "x", Raw: json.RawMessage(`{"name":"x"}`)}}, {{Name: "y", Raw: json.RawMessage(`{"name":"y"}`)}}}
	for range 3 {
		snap := c.build([]string{"a", "a_", "b"}, lists, make([]error, 3))
		listed, ok := snap.Lookup("a___x")
		if !ok || listed.Server != "a" || listed.Tool != "_x" {
			t.Fatalf("listed a___x = %+v, want a's _x", listed)
		}
		for _, tool := range snap.Tools {
			if server, name, ok := c.Route(tool.Name); ok && (server != tool.Server || name != tool.Tool) {
				t.Errorf("%s is listed as %s's %q but routes to %s's %q", tool.Name, tool.Server, tool.Tool, server, name)
			}
		}
		if len(snap.Collisions) != 1 || snap.Collisions[0].HiddenServer != "a_" {
			t.Fatalf("collisions %+v, want a_'s x hidden", snap.Collisions)
		}
	}
	if got := c.Collisions(); len(got) != 1 || !strings.Contains(got[0].String(), "toolNames.separator") {
		t.Errorf("Collisions() = %v, want one naming the way out", got)
	}
	if n := strings.Count(log.String(), "share an exposed name"); n != 1 {
		t.Errorf("the collision was logged %d times over three listings, want once:\n%s", n, log.String())
	}
}
