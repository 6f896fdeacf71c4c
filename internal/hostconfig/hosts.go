package hostconfig

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Host is one MCP host whose config mcpx reads and edits.
type Host struct {
	// Name is how the CLI names it: claude-desktop, claude-code, cursor,
	// vscode, opencode, codex, gemini, windsurf.
	Name  string
	Title string
	// Key is the member (TOML table for Codex) that holds the server list.
	Key string
	// TOML is set for Codex's config.toml; the others are JSON.
	TOML bool
	// HTTP is set for hosts whose file can name a remote server, so that
	// install can point them at mcpx's HTTP face.
	HTTP bool
	// files returns the host's user-wide config file candidates, the
	// preferred first.
	files  func(e Env) ([]string, error)
	subst  func(string, *substCtx) (string, error)
	server func(r *sreader, n *node)
}

// Env is what locating a host's files depends on.
type Env struct {
	Getenv func(string) string
	GOOS   string // runtime.GOOS
}

func (e Env) home() (string, error) {
	h := e.Getenv("HOME")
	if e.GOOS == "windows" && h == "" {
		h = e.Getenv("USERPROFILE")
	}
	if !filepath.IsAbs(h) {
		return "", fmt.Errorf("$HOME is unset or relative")
	}
	return h, nil
}

// appConfig is the folder desktop apps keep their settings in.
func (e Env) appConfig() (string, error) {
	switch e.GOOS {
	case "darwin":
		h, err := e.home()
		return filepath.Join(h, "Library", "Application Support"), err
	case "windows":
		if a := e.Getenv("APPDATA"); a != "" {
			return a, nil
		}
		return "", fmt.Errorf("%%APPDATA%% is unset")
	}
	return e.xdgConfig()
}

func (e Env) xdgConfig() (string, error) {
	if x := e.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return x, nil
	}
	h, err := e.home()
	return filepath.Join(h, ".config"), err
}

func inHome(parts ...string) func(Env) ([]string, error) {
	return func(e Env) ([]string, error) {
		h, err := e.home()
		return []string{filepath.Join(append([]string{h}, parts...)...)}, err
	}
}

// Hosts lists every host mcpx knows, in the order the CLI shows them.
var Hosts = []*Host{
	{
		Name: "claude-desktop", Title: "Claude Desktop", Key: "mcpServers",
		files: func(e Env) ([]string, error) {
			d, err := e.appConfig()
			return []string{filepath.Join(d, "Claude", "claude_desktop_config.json")}, err
		},
		subst: substLiteral, server: claudeDesktopServer,
	},
	{
		Name: "claude-code", Title: "Claude Code", Key: "mcpServers", HTTP: true,
		files: func(e Env) ([]string, error) {
			if d := e.Getenv("CLAUDE_CONFIG_DIR"); filepath.IsAbs(d) {
				return []string{filepath.Join(d, ".claude.json")}, nil
			}
			return inHome(".claude.json")(e)
		},
		subst: substClaude, server: claudeCodeServer,
	},
	{
		Name: "cursor", Title: "Cursor", Key: "mcpServers", HTTP: true,
		files: inHome(".cursor", "mcp.json"),
		subst: substEditor, server: cursorServer,
	},
	{
		Name: "vscode", Title: "VS Code", Key: "servers", HTTP: true,
		files: func(e Env) ([]string, error) {
			d, err := e.appConfig()
			return []string{filepath.Join(d, "Code", "User", "mcp.json")}, err
		},
		subst: substEditor, server: vscodeServer,
	},
	{
		Name: "opencode", Title: "opencode", Key: "mcp", HTTP: true,
		files: func(e Env) ([]string, error) {
			d, err := e.xdgConfig()
			dir := filepath.Join(d, "opencode")
			return []string{filepath.Join(dir, "opencode.json"), filepath.Join(dir, "opencode.jsonc"), filepath.Join(dir, "config.json")}, err
		},
		subst: substOpencode, server: opencodeServer,
	},
	{
		Name: "codex", Title: "Codex", Key: "mcp_servers", TOML: true, HTTP: true,
		files: func(e Env) ([]string, error) {
			if d := e.Getenv("CODEX_HOME"); filepath.IsAbs(d) {
				return []string{filepath.Join(d, "config.toml")}, nil
			}
			return inHome(".codex", "config.toml")(e)
		},
	},
	{
		Name: "gemini", Title: "Gemini CLI", Key: "mcpServers", HTTP: true,
		files: inHome(".gemini", "settings.json"),
		subst: substGemini, server: geminiServer,
	},
	{
		Name: "windsurf", Title: "Windsurf", Key: "mcpServers", HTTP: true,
		files: inHome(".codeium", "windsurf", "mcp_config.json"),
		subst: substEditor, server: windsurfServer,
	},
}

// Lookup returns the host named name, or nil.
func Lookup(name string) *Host {
	for _, h := range Hosts {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// Names lists the hosts' names.
func Names() string {
	names := make([]string, len(Hosts))
	for i, h := range Hosts {
		names[i] = h.Name
	}
	return strings.Join(names, ", ")
}

// Files returns the host's user-wide config file candidates, the
// preferred first; exists tells which is there, if any.
func (h *Host) Files(e Env) ([]string, error) { return h.files(e) }

// File returns the user-wide config file: the first candidate that
// exists (per exists), else the preferred one.
func (h *Host) File(e Env, exists func(string) bool) (string, error) {
	files, err := h.files(e)
	if err != nil {
		return "", fmt.Errorf("locating %s's config: %w", h.Title, err)
	}
	for _, f := range files {
		if exists(f) {
			return f, nil
		}
	}
	return files[0], nil
}
