package hosts

import (
	"strings"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/mcpxtest"
)

// TestRealHostsImport: servers added with a real host's own `mcp add`
// command, in the file it writes, are imported by mcpx import with every
// field the host wrote. (opencode's `mcp add` asks its questions
// interactively, so its fixture is written from its documentation.)
func TestRealHostsImport(t *testing.T) {
	t.Parallel()
	type want struct {
		command, url, typ, maxTimeout string
		args                          []string
		env, headers                  map[string]string
	}
	cases := []struct {
		host, bin string
		adds      [][]string
		want      map[string]want
	}{
		{
			host: "claude-code", bin: "claude",
			adds: [][]string{
				{"mcp", "add", "-s", "user", "-t", "http", "sentry", "https://mcp.sentry.dev/mcp", "-H", "Authorization: Bearer ${SENTRY_TOKEN}"},
				{"mcp", "add", "-s", "user", "airtable", "-e", "AIRTABLE_API_KEY=key", "--", "npx", "-y", "airtable-mcp-server"},
				{"mcp", "add", "-s", "local", "-t", "sse", "linear", "https://mcp.linear.app/sse"},
			},
			want: map[string]want{
				"sentry":   {url: "https://mcp.sentry.dev/mcp", headers: map[string]string{"Authorization": "Bearer ${SENTRY_TOKEN}"}},
				"airtable": {command: "npx", args: []string{"-y", "airtable-mcp-server"}, env: map[string]string{"AIRTABLE_API_KEY": "key"}},
				"linear":   {typ: "sse", url: "https://mcp.linear.app/sse"},
			},
		},
		{
			host: "gemini", bin: "gemini",
			adds: [][]string{
				{"mcp", "add", "-s", "user", "-e", "DB=postgres://x", "--timeout", "15000", "py", "/usr/bin/python3", "server.py"},
				{"mcp", "add", "-s", "user", "-t", "http", "-H", "X-Api: k", "web", "https://example.com/mcp"},
				{"mcp", "add", "-s", "user", "-t", "sse", "old", "https://example.com/sse"},
			},
			want: map[string]want{
				"py":  {command: "/usr/bin/python3", args: []string{"server.py"}, env: map[string]string{"DB": "postgres://x"}, maxTimeout: "15s"},
				"web": {url: "https://example.com/mcp", headers: map[string]string{"X-Api": "k"}},
				"old": {typ: "sse", url: "https://example.com/sse"},
			},
		},
		{
			host: "codex", bin: "codex",
			adds: [][]string{
				{"mcp", "add", "--env", "API_KEY=v", "docs", "--", "docs-server", "--port", "4000"},
				{"mcp", "add", "figma", "--url", "https://mcp.figma.com/mcp", "--bearer-token-env-var", "FIGMA_TOKEN"},
			},
			want: map[string]want{
				"docs":  {command: "docs-server", args: []string{"--port", "4000"}, env: map[string]string{"API_KEY": "v"}},
				"figma": {url: "https://mcp.figma.com/mcp", headers: map[string]string{"Authorization": "Bearer ${FIGMA_TOKEN}"}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.host, func(t *testing.T) {
			bin := mcpxtest.RealHost(t, tc.bin)
			e := mcpxtest.NewEnv(t)
			home := e.Vars["HOME"]
			for _, add := range tc.adds {
				out := runRealHost(t, e, bin, home, add...)
				t.Logf("%s %v:\n%s", tc.bin, add, out)
			}
			out, stderr, code := e.Run(30*time.Second, "import", tc.host, "--dry-run")
			if code != 0 {
				t.Fatalf("mcpx import %s: exit %d\n%s", tc.host, code, stderr)
			}
			cfg, err := config.Parse([]byte(out), "", &config.LoadOptions{Lookup: func(string) (string, bool) { return "set", true }})
			if err != nil {
				t.Fatalf("the imported config does not load: %v\n%s", err, out)
			}
			if strings.Contains(stderr, "skipped ") {
				t.Errorf("mcpx skipped a server the host wrote itself:\n%s", stderr)
			}
			if len(cfg.Servers) != len(tc.want) {
				t.Errorf("imported %v, want %d servers\n%s", cfg.Names(), len(tc.want), stderr)
			}
			for name, w := range tc.want {
				s := cfg.Servers[name]
				if s == nil {
					t.Errorf("no server %q imported:\n%s", name, stderr)
					continue
				}
				typ := string(s.Transport)
				if w.typ == "" {
					w.typ = map[bool]string{true: "stdio", false: "http"}[w.command != ""]
				}
				expand := func(m map[string]string) map[string]string {
					out := map[string]string{}
					for k, v := range m {
						out[k] = strings.ReplaceAll(v, "${SENTRY_TOKEN}", "set")
						out[k] = strings.ReplaceAll(out[k], "${FIGMA_TOKEN}", "set")
					}
					return out
				}
				ok := s.Command == w.command && s.URL == w.url && typ == w.typ &&
					strings.Join(s.Args, " ") == strings.Join(w.args, " ") &&
					realSameMap(s.Env, w.env) && realSameMap(s.Headers, expand(w.headers))
				if w.maxTimeout != "" {
					ok = ok && s.MaxTimeout.String() == w.maxTimeout
				}
				if !ok {
					t.Errorf("server %q imported as %+v, want %+v\n%s", name, s, w, stderr)
				}
			}
		})
	}
}

func realSameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
