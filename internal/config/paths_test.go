package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultPaths(t *testing.T) {
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
