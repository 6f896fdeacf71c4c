package config

import (
	"fmt"
	"os"
	"path/filepath"
)

// Paths are the directories mcpx uses, after the XDG Base Directory
// specification. Each ends in "mcpx".
type Paths struct {
	ConfigDir  string // the config file
	StateDir   string // the job store, logs
	RuntimeDir string // the daemon's socket
}

// DefaultPaths returns the directories named by the environment, read with
// getenv (nil means os.Getenv):
//
//	ConfigDir   $XDG_CONFIG_HOME/mcpx, else $HOME/.config/mcpx
//	StateDir    $XDG_STATE_HOME/mcpx, else $HOME/.local/state/mcpx
//	RuntimeDir  $XDG_RUNTIME_DIR/mcpx, else StateDir
//
// As the specification says, a relative value counts as unset. It fails only
// when $HOME is needed and is unset or relative. It creates nothing.
func DefaultPaths(getenv func(string) string) (Paths, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	dir := func(xdg, fallback string) (string, error) {
		if v := getenv(xdg); filepath.IsAbs(v) {
			return filepath.Join(v, "mcpx"), nil
		}
		home := getenv("HOME")
		if !filepath.IsAbs(home) {
			return "", fmt.Errorf("locating mcpx directories: $%s and $HOME are unset or relative", xdg)
		}
		return filepath.Join(home, fallback, "mcpx"), nil
	}
	var (
		p   Paths
		err error
	)
	if p.ConfigDir, err = dir("XDG_CONFIG_HOME", ".config"); err != nil {
		return Paths{}, err
	}
	if p.StateDir, err = dir("XDG_STATE_HOME", filepath.Join(".local", "state")); err != nil {
		return Paths{}, err
	}
	p.RuntimeDir = p.StateDir
	if v := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(v) {
		p.RuntimeDir = filepath.Join(v, "mcpx")
	}
	return p, nil
}

// DefaultConfigFile returns the config file's path: ConfigDir/config.json.
func (p Paths) DefaultConfigFile() string {
	return filepath.Join(p.ConfigDir, "config.json")
}

// OAuthDir returns the directory of upstream sign-ins: StateDir/oauth.
func (p Paths) OAuthDir() string { return filepath.Join(p.StateDir, "oauth") }
