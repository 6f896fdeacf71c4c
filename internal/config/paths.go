package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
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
//	RuntimeDir  $XDG_RUNTIME_DIR/mcpx, else /run/user/<uid>/mcpx when
//	            that directory is the user's, else StateDir
//
// A host that starts `mcpx serve` with a filtered environment (HOME and
// PATH, no XDG_*) thus finds the daemon the user's own shell started: on
// a systemd system the shell's XDG_RUNTIME_DIR is /run/user/<uid>, and
// mcpx takes it when the variable is unset and the directory exists,
// belongs to the user and is theirs alone (mode 0700), as logind makes it.
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
	} else if d := userRuntimeDir(runUserRoot); d != "" {
		p.RuntimeDir = filepath.Join(d, "mcpx")
	}
	return p, nil
}

// runUserRoot is where logind makes each user's runtime directory.
var runUserRoot = "/run/user"

// userRuntimeDir returns root/<uid> if it is a directory of this user's
// that no one else may enter, else "".
func userRuntimeDir(root string) string {
	d := filepath.Join(root, strconv.Itoa(os.Getuid()))
	fi, err := os.Stat(d)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return ""
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		return ""
	}
	return d
}

// DefaultConfigFile returns the config file's path: ConfigDir/config.json.
func (p Paths) DefaultConfigFile() string {
	return filepath.Join(p.ConfigDir, "config.json")
}

// OAuthDir returns the directory of upstream sign-ins: StateDir/oauth.
func (p Paths) OAuthDir() string { return filepath.Join(p.StateDir, "oauth") }
