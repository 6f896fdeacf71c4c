package hostconfig

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var stdioTarget = Target{Command: "/opt/mcpx/bin/mcpx", Args: []string{"serve"}, Env: map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}, Startup: 44500 * time.Millisecond}
var httpTarget = Target{URL: "http://127.0.0.1:7777/mcp", Headers: map[string]string{"Authorization": "Bearer tok"}, Startup: 45 * time.Second}

// TestEditFixtures points each fixture's host at mcpx (stdio, then HTTP
// with every taken server moved out), checks the diff against a golden
// file, that the original's lines all survive an insert, and that the
// result reads back with mcpx in it.
func TestEditFixtures(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("testdata", "read"))
	for _, tc := range readCases {
		h := Lookup(tc.host)
		data, err := os.ReadFile(filepath.Join(root, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		name := strings.ReplaceAll(tc.file, "/", "_")
		t.Run(name+"/stdio", func(t *testing.T) {
			v, err := h.Entry(stdioTarget)
			if err != nil {
				t.Fatal(err)
			}
			out, err := h.Edit(data, []Member{{"mcpx", v}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !subsequence(lines(data), lines(out)) {
				t.Errorf("an insert lost lines of the original:\n%s", Diff("a", "b", data, out))
			}
			goldenFile(t, filepath.Join("testdata", "edit", name+".stdio.diff"), []byte(Diff("a/"+tc.file, "b/"+tc.file, data, out)))
			servers, err := h.Servers(out)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := servers["mcpx"]; !ok {
				t.Errorf("no mcpx server after the edit: %v", servers)
			}
			again, err := h.Edit(out, []Member{{"mcpx", v}}, nil)
			if err != nil || !bytes.Equal(again, out) {
				t.Errorf("installing twice changed the file again (err %v):\n%s", err, Diff("once", "twice", out, again))
			}
		})
		if !h.HTTP {
			continue
		}
		t.Run(name+"/http-move", func(t *testing.T) {
			im, err := Read(h, tc.file, data, ReadOptions{Home: filepath.Join(root, tc.home)})
			if err != nil {
				t.Fatal(err)
			}
			var moved []string
			for _, e := range im.Entries {
				if e.Server != nil && !strings.HasPrefix(e.Scope, "local ") {
					moved = append(moved, e.From)
				}
			}
			v, err := h.Entry(httpTarget)
			if err != nil {
				t.Fatal(err)
			}
			out, err := h.Edit(data, []Member{{"mcpx", v}}, moved)
			if err != nil {
				t.Fatal(err)
			}
			goldenFile(t, filepath.Join("testdata", "edit", name+".http-move.diff"), []byte(Diff("a/"+tc.file, "b/"+tc.file, data, out)))
			servers, err := h.Servers(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range moved {
				if _, ok := servers[m]; ok {
					t.Errorf("server %q was moved but is still in the file", m)
				}
			}
		})
	}
}

// subsequence reports whether every element of a is in b, in order.
func subsequence(a, b []string) bool {
	j := 0
	for _, s := range b {
		if j < len(a) && a[j] == s {
			j++
		}
	}
	return j == len(a)
}

func TestEditNewFile(t *testing.T) {
	for _, h := range Hosts {
		v, err := h.Entry(stdioTarget)
		if err != nil {
			t.Fatal(err)
		}
		out, err := h.Edit(nil, []Member{{"mcpx", v}}, nil)
		if err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		goldenFile(t, filepath.Join("testdata", "edit", "new-"+h.Name+".txt"), out)
	}
}

// TestEditRefusals: files the editor cannot change as the host would
// read them are refused, with the reason, and never half-edited.
func TestEditRefusals(t *testing.T) {
	v := jsonValue(map[string]any{"command": "/mcpx", "args": []string{"serve"}})
	cases := []struct {
		host, data, want string
	}{
		{"claude-code", `{"mcpServers": {"a": {"command": "x"}}, "mcpServers": {}}`, `"mcpServers" appears 2 times`},
		{"claude-code", `{"mcpServers": []}`, `"mcpServers" is not a JSON object`},
		{"cursor", `{"mcpServers": {"a": {}, "a": {}}}`, `server "a" appears 2 times`},
		{"cursor", `[1, 2]`, `does not hold a JSON object`},
		{"cursor", `{"mcpServers": {`, `unexpected end of JSON input`},
		{"vscode", `{"servers": {} /* open`, `unterminated comment`},
		{"codex", "mcp_servers = { mcpx = { command = \"old\" } }\n", `mcpx edits only servers written as [mcp_servers.NAME] tables`},
		{"codex", "mcp_servers.mcpx.command = \"old\"\n", `mcpx edits only servers written as [mcp_servers.NAME] tables`},
		{"codex", "[mcp_servers\n", `toml`},
		{"claude-desktop", "", ``},
	}
	for _, tc := range cases {
		h := Lookup(tc.host)
		_, err := h.Edit([]byte(tc.data), []Member{{"mcpx", v}}, nil)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s %q: %v", tc.host, tc.data, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: got error %v, want one saying %q", tc.host, tc.data, err, tc.want)
		}
	}
	if _, err := Lookup("claude-desktop").Entry(httpTarget); err == nil {
		t.Error("Claude Desktop took an HTTP entry; its file has local servers only")
	}
}

// TestEditRemoveKeepsComments: moving servers out of a JSONC file keeps
// the comments and members around them, and removing the last member
// leaves no dangling comma.
func TestEditRemoveKeepsComments(t *testing.T) {
	in := "{\n  // servers\n  \"servers\": {\n    \"a\": {\"command\": \"a\"}, // first\n    \"b\": {\"command\": \"b\"}\n  },\n  /* keep */ \"other\": 1\n}\n"
	h := Lookup("vscode")
	out, err := h.Edit([]byte(in), nil, []string{"b"})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  // servers\n  \"servers\": {\n    \"a\": {\"command\": \"a\"} // first\n  },\n  /* keep */ \"other\": 1\n}\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	out, err = h.Edit([]byte(in), nil, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "// servers") || !strings.Contains(string(out), "/* keep */") {
		t.Errorf("comments lost:\n%s", out)
	}
}

func TestDiff(t *testing.T) {
	a := []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n")
	b := []byte("1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\neleven")
	want := "--- a\n+++ b\n@@ -2,9 +2,10 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n 10\n+eleven\n\\ No newline at end of file\n"
	if got := Diff("a", "b", a, b); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if Diff("a", "b", a, a) != "" {
		t.Error("equal files have a diff")
	}
}

// TestAppendJSON: AppendJSON adds servers after the list's own, in the
// order given, and leaves a replaced one where it was.
func TestAppendJSON(t *testing.T) {
	in := "{\n  // mine\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\"command\": \"b\"}\n  }\n}\n"
	set := []Member{{Name: "c", Value: json.RawMessage(`{"command":"c"}`)}, {Name: "a", Value: json.RawMessage(`{"command":"a2"}`)}, {Name: "d", Value: json.RawMessage(`{"command":"d"}`)}}
	out, err := AppendJSON([]byte(in), "mcpServers", set)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  // mine\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"a2\"\n    },\n    \"b\": {\"command\": \"b\"},\n    \"c\": {\n      \"command\": \"c\"\n    },\n    \"d\": {\n      \"command\": \"d\"\n    }\n  }\n}\n"
	if string(out) != want {
		t.Errorf("AppendJSON gave\n%s\nwant\n%s", out, want)
	}
}
