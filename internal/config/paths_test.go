package config

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultPaths(t *testing.T) {
	useRunUserRoot(t, t.TempDir()) // no /run/user/<uid> here
	tests := []struct {
		name string
		env  map[string]string
		want Paths
		err  string
	}{
		{"home only", map[string]string{"HOME": "/home/u"},
			Paths{"/home/u/.config/mcpx", "/home/u/.local/state/mcpx", "/home/u/.local/state/mcpx"}, ""},
		{"xdg", map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s/", "XDG_RUNTIME_DIR": "/run/user/1000"},
			Paths{"/c/mcpx", "/s/mcpx", "/run/user/1000/mcpx"}, ""},
		{"xdg without home", map[string]string{"XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s"},
			Paths{"/c/mcpx", "/s/mcpx", "/s/mcpx"}, ""},
		{"relative xdg values are ignored", map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "c", "XDG_STATE_HOME": "./s", "XDG_RUNTIME_DIR": "run"},
			Paths{"/home/u/.config/mcpx", "/home/u/.local/state/mcpx", "/home/u/.local/state/mcpx"}, ""},
		{"no home", map[string]string{}, Paths{}, "locating mcpx directories: $XDG_CONFIG_HOME and $HOME are unset or relative"},
		{"relative home", map[string]string{"HOME": "home", "XDG_CONFIG_HOME": "/c"}, Paths{}, "locating mcpx directories: $XDG_STATE_HOME and $HOME are unset or relative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DefaultPaths(func(k string) string { return tt.env[k] })
			if gotErr := errString(err); tt.err != "" && gotErr != tt.err || tt.err == "" && err != nil {
				t.Fatalf("error = %s, want %q", gotErr, tt.err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DefaultPaths mismatch (-want +got):\n%s", diff)
			}
		})
	}
	p := Paths{ConfigDir: "/c/mcpx"}
	if got, want := p.DefaultConfigFile(), "/c/mcpx/config.json"; got != want {
		t.Errorf("DefaultConfigFile() = %q, want %q", got, want)
	}
}

// useRunUserRoot points the search for the user's runtime directory at
// root for the test.
func useRunUserRoot(t *testing.T, root string) {
	old := runUserRoot
	runUserRoot = root
	t.Cleanup(func() { runUserRoot = old })
}

// TestRuntimeDirWithoutXDG: with XDG_RUNTIME_DIR unset, as under a host
// that passes only HOME and PATH, the runtime directory is the one the
// user's shell would have been given, /run/user/<uid>, when it is the
// user's alone; one that others may enter is not taken.
func TestRuntimeDirWithoutXDG(t *testing.T) {
	root := t.TempDir()
	useRunUserRoot(t, root)
	dir := filepath.Join(root, strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	filtered := map[string]string{"HOME": "/home/u"}
	shell := map[string]string{"HOME": "/home/u", "XDG_RUNTIME_DIR": dir}
	paths := func(env map[string]string) Paths {
		p, err := DefaultPaths(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if got, want := paths(filtered).RuntimeDir, paths(shell).RuntimeDir; got != want {
		t.Errorf("runtime dir under a filtered environment %q, the shell's %q", got, want)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := paths(filtered).RuntimeDir; got != "/home/u/.local/state/mcpx" {
		t.Errorf("a runtime directory others may enter was taken: %q", got)
	}
}
