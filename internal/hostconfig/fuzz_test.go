package hostconfig

import (
	"os"
	"path/filepath"
	"testing"
)

// seedFixtures adds every fixture to f's corpus.
func seedFixtures(f *testing.F) {
	for _, tc := range readCases {
		if data, err := os.ReadFile(filepath.Join("testdata", "read", tc.file)); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x"},}, /* c */ "z": [1,]}`))
	f.Add([]byte("\uFEFF{}"))
}

// FuzzEdit: whatever a host's file holds, an edit either fails with an
// error or returns a file that reads back with the edit made (EditJSON and
// EditTOML check that themselves; this checks they never panic and that
// what they return holds the server).
func FuzzEdit(f *testing.F) {
	seedFixtures(f)
	v := jsonValue(map[string]any{"command": "/mcpx", "args": []string{"serve"}})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{"vscode", "codex"} {
			h := Lookup(name)
			out, err := h.Edit(data, []Member{{"mcpx", v}}, []string{"a", "github"})
			if err != nil {
				continue
			}
			servers, err := h.Servers(out)
			if err != nil {
				t.Fatalf("%s: an edit's output does not read back: %v\n%q", name, err, out)
			}
			if _, ok := servers["mcpx"]; !ok {
				t.Fatalf("%s: an edit's output lacks the server:\n%q", name, out)
			}
		}
	})
}

// FuzzRead: reading any file as any host either fails with an error or
// accounts for every server, taken or skipped with a reason.
func FuzzRead(f *testing.F) {
	seedFixtures(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, h := range Hosts {
			im, err := Read(h, "/p/.vscode/mcp.json", data, ReadOptions{Home: "/home/u"})
			if err != nil {
				continue
			}
			for _, e := range im.Entries {
				if (e.Server == nil) == (e.Skipped == "") {
					t.Fatalf("%s: entry %q is neither taken nor skipped with a reason: %+v", h.Name, e.From, e)
				}
			}
		}
	})
}
