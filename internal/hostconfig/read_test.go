package hostconfig

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// readCases are the fixtures, each a real file of its host's format
// written from the host's documentation.
var readCases = []struct {
	host, file string
	home       string // relative to testdata/read
	servers    func(t *testing.T, data []byte) map[string]map[string]any
}{
	{host: "claude-desktop", file: "claude-desktop/claude_desktop_config.json"},
	{host: "claude-code", file: "claude-code/.claude.json"},
	{host: "claude-code", file: "claude-code/proj/.mcp.json"},
	{host: "cursor", file: "cursor/.cursor/mcp.json", home: "cursor"},
	{host: "cursor", file: "cursor/proj/.cursor/mcp.json", home: "cursor"},
	{host: "vscode", file: "vscode/proj/.vscode/mcp.json"},
	{host: "opencode", file: "opencode/opencode.jsonc"},
	{host: "codex", file: "codex/config.toml"},
	{host: "gemini", file: "gemini/.gemini/settings.json", home: "gemini"},
	{host: "windsurf", file: "windsurf/mcp_config.json"},
}

func TestReadFixtures(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("testdata", "read"))
	for _, tc := range readCases {
		t.Run(strings.ReplaceAll(tc.file, "/", "_"), func(t *testing.T) {
			h := Lookup(tc.host)
			file := filepath.Join(root, tc.file)
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			home := "/nonexistent-home"
			if tc.home != "" {
				home = filepath.Join(root, tc.home)
			}
			im, err := Read(h, file, data, ReadOptions{Home: home})
			if err != nil {
				t.Fatal(err)
			}
			im.File = tc.file // the golden must not hold this machine's paths
			for i := range im.Entries {
				im.Entries[i].Notes = relNotes(im.Entries[i].Notes, root)
				if s := im.Entries[i].Server; s != nil {
					for j, a := range s.Args {
						s.Args[j] = strings.ReplaceAll(a, root, "$ROOT")
					}
					s.Cwd = strings.ReplaceAll(s.Cwd, root, "$ROOT")
				}
				im.Entries[i].Scope = strings.ReplaceAll(im.Entries[i].Scope, root, "$ROOT")
			}
			got, err := json.MarshalIndent(im, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			goldenFile(t, file+".golden.json", append(got, '\n'))
			accounted(t, h, data, im)
		})
	}
}

func relNotes(notes []string, root string) []string {
	for i, n := range notes {
		notes[i] = strings.ReplaceAll(n, root, "$ROOT")
	}
	return notes
}

// accounted checks that every field of every server in the file was taken
// or noted, or the server skipped with a reason: nothing silently dropped.
func accounted(t *testing.T, h *Host, data []byte, im *Import) {
	t.Helper()
	total := 0
	for scope, list := range rawServerLists(t, h, data) {
		total += len(list)
		for name, fields := range list {
			var e *Entry
			for i := range im.Entries {
				local := strings.HasPrefix(im.Entries[i].Scope, "local ")
				if im.Entries[i].From == name && (im.Entries[i].Scope == scope || scope == "" && !local) {
					e = &im.Entries[i]
				}
			}
			if e == nil {
				t.Errorf("server %q of the file is not in the import", name)
				continue
			}
			if e.Skipped != "" {
				continue
			}
			for field := range fields {
				noted := false
				for _, note := range e.Notes {
					noted = noted || strings.HasPrefix(note, field+":")
				}
				if !contains(e.Taken, field) && !noted {
					t.Errorf("server %q: field %q was neither taken nor noted", name, field)
				}
			}
		}
	}
	if total != len(im.Entries) {
		t.Errorf("the file has %d servers, the import %d entries", total, len(im.Entries))
	}
}

// rawServerLists decodes the file's server lists without the package's
// reader, by scope: "" for the file's own, "local DIR" for Claude Code's
// per-project lists.
func rawServerLists(t *testing.T, h *Host, data []byte) map[string]map[string]map[string]any {
	t.Helper()
	var top map[string]any
	if h.TOML {
		if err := toml.Unmarshal(data, &top); err != nil {
			t.Fatal(err)
		}
	} else {
		clean, _, err := standardize(data)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(clean, &top); err != nil {
			t.Fatal(err)
		}
	}
	lists := map[string]map[string]map[string]any{}
	add := func(scope string, v any) {
		m, _ := v.(map[string]any)
		list := map[string]map[string]any{}
		for k, s := range m {
			f, _ := s.(map[string]any)
			list[k] = f
		}
		lists[scope] = list
	}
	add("", top[h.Key])
	if projects, ok := top["projects"].(map[string]any); ok && h.Name == "claude-code" {
		for dir, p := range projects {
			if pm, ok := p.(map[string]any); ok {
				add("local "+dir, pm[h.Key])
			}
		}
	}
	return lists
}

// goldenFile compares got with the file, or rewrites it with -update.
func goldenFile(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, d)
	}
}

// TestReadSkipsMCPX: a host's entry that runs mcpx serve (what mcpx
// install writes) is never imported: mcpx would serve itself.
func TestReadSkipsMCPX(t *testing.T) {
	for _, h := range Hosts {
		v, err := h.Entry(Target{Command: "/usr/local/bin/mcpx", Args: []string{"serve", "--config", "/c.json"}})
		if err != nil {
			t.Fatal(err)
		}
		data, err := h.Edit(nil, []Member{{"mcpx", v}, {"other", jsonValue(map[string]any{"command": "/bin/other"})}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "opencode" {
			data, _ = h.Edit(data, []Member{{"other", jsonValue(map[string]any{"type": "local", "command": []string{"/bin/other"}})}}, nil)
		}
		im, err := Read(h, "f", data, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range im.Entries {
			switch {
			case e.From == "mcpx" && (e.Server != nil || !strings.Contains(e.Skipped, "runs mcpx itself")):
				t.Errorf("%s: mcpx's own entry: %+v", h.Name, e)
			case e.From == "other" && e.Server == nil:
				t.Errorf("%s: another server was skipped: %s", h.Name, e.Skipped)
			}
		}
	}
}
