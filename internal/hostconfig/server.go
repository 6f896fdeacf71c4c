package hostconfig

import (
	"fmt"
	"strings"
)

// Server is one server in mcpx's mcpServers form, as the config file
// spells it. Fields are in the order the file shows them.
type Server struct {
	Type           string            `json:"type,omitempty"` // "stdio", "http" or "sse"
	Command        string            `json:"command,omitempty"`
	Args           []string          `json:"args,omitempty"`
	Env            map[string]string `json:"env,omitempty"`
	Cwd            string            `json:"cwd,omitempty"`
	URL            string            `json:"url,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	Disabled       bool              `json:"disabled,omitempty"`
	StartupTimeout string            `json:"startupTimeout,omitempty"`
	MaxTimeout     string            `json:"maxTimeout,omitempty"`
	IdleTimeout    string            `json:"idleTimeout,omitempty"`
}

// Entry is one server of a host's file, as read.
type Entry struct {
	// Name is the server's name in mcpx; From its name in the host's file.
	Name, From string
	// Scope says where in the host's config it was: "user", "project" or
	// "local <dir>" (Claude Code's per-project servers in ~/.claude.json).
	Scope string
	// Server is nil when the server is skipped.
	Server *Server
	// Skipped says why the whole server was not taken.
	Skipped string
	// Taken lists the fields read into Server, in file order.
	Taken []string
	// Notes say, field by field, what was not taken as it was.
	Notes []string
}

// Renamed reports whether mcpx names the server otherwise than the host.
func (e *Entry) Renamed() bool { return e.Name != e.From }

func (e *Entry) notef(format string, args ...any) {
	e.Notes = append(e.Notes, fmt.Sprintf(format, args...))
}

// Var is a variable an imported server reads from mcpx's environment.
type Var struct {
	Name string
	// Servers that read it, by mcpx name.
	Servers []string
	// Why says where it came from: an input of the host's, an env
	// reference, a token variable.
	Why string
	// Secret is set when the host asked for it as a password.
	Secret bool
}

// Import is what Read found in one file.
type Import struct {
	Host    string
	File    string
	Entries []Entry
	Vars    []Var

	sep  string          // the tool name separator, which names must not hold
	used map[string]bool // names given, in lower case
}

func (im *Import) addVar(name, server, why string, secret bool) {
	for i := range im.Vars {
		if im.Vars[i].Name == name {
			if !contains(im.Vars[i].Servers, server) {
				im.Vars[i].Servers = append(im.Vars[i].Servers, server)
			}
			im.Vars[i].Secret = im.Vars[i].Secret || secret
			return
		}
	}
	im.Vars = append(im.Vars, Var{Name: name, Servers: []string{server}, Why: why, Secret: secret})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The name rules of mcpx's config: 1 to 48 of [A-Za-z0-9_-], never "mcpx",
// never containing the tool name separator (by default "__").
const maxName = 48

var badNameRune = lazyRegexp(`[^A-Za-z0-9_-]+`)

// MCPXName returns the name mcpx gives a host's server called name, with
// sep the tool name separator: name itself when it is valid; else name
// with each run of other characters made one '-', each separator made '-',
// and the result shortened to 48 characters.
func MCPXName(name, sep string) string {
	n := badNameRune().ReplaceAllString(name, "-")
	if sep != "" {
		n = strings.ReplaceAll(n, sep, "-")
	}
	n = strings.Trim(n, "-")
	if len(n) > maxName {
		n = n[:maxName]
	}
	if n == "" {
		n = "server"
	}
	if strings.EqualFold(n, "mcpx") {
		n += "-upstream"
	}
	return n
}

// name returns a name for the host's server from, unique in the import
// and valid in mcpx, renaming where it must.
func (im *Import) name(from string) string {
	if im.used == nil {
		im.used = map[string]bool{}
	}
	base := MCPXName(from, im.sep)
	n := base
	for k := 2; im.used[strings.ToLower(n)]; k++ {
		suffix := fmt.Sprintf("-%d", k)
		n = base[:min(len(base), maxName-len(suffix))] + suffix
	}
	im.used[strings.ToLower(n)] = true
	return n
}
