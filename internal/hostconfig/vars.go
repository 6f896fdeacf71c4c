package hostconfig

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Hosts fill in variables in their own syntax; mcpx's config has one:
// ${NAME} and ${NAME:-default} from mcpx's environment, $${ for a literal
// "${". A subst turns one host string into mcpx's syntax.

// substCtx is what a value's variables may refer to.
type substCtx struct {
	im     *Import
	entry  *Entry
	field  string
	inputs map[string]vscodeInput // VS Code's inputs by id
	// project is the folder a project-scoped file belongs to ("" for a
	// user-wide file): ${workspaceFolder}.
	project string
}

// errSkip is a reason to skip the whole server.
type errSkip struct{ why string }

func (e *errSkip) Error() string { return e.why }

func skipf(format string, args ...any) error { return &errSkip{fmt.Sprintf(format, args...)} }

// literal escapes a string from a host that expands nothing.
func literal(s string) string { return strings.ReplaceAll(s, "${", "$${") }

var editorVar = lazyRegexp(`\$\{([^}]*)\}`)

// substEditor maps VS Code's, Cursor's and Windsurf's variables:
// ${env:NAME} -> ${NAME}; ${input:ID} -> ${ID as an env name};
// ${userHome} -> ${HOME}; ${workspaceFolder} and its basename -> the
// project's folder; ${pathSeparator} and ${/} -> "/".
func substEditor(s string, c *substCtx) (string, error) {
	var err error
	out := editorVar().ReplaceAllStringFunc(s, func(m string) string {
		v := m[2 : len(m)-1]
		switch {
		case strings.HasPrefix(v, "env:"):
			name := v[len("env:"):]
			if !envName().MatchString(name) {
				err = skipf("%s: ${%s} is not a variable name mcpx can read", c.field, v)
				return m
			}
			c.im.addVar(name, c.entry.Name, "the host read it from its environment", false)
			return "${" + name + "}"
		case strings.HasPrefix(v, "input:") && c.inputs != nil:
			id := v[len("input:"):]
			in, ok := c.inputs[id]
			if !ok {
				err = skipf("%s: ${%s} names no input of the file", c.field, v)
				return m
			}
			name := inputVar(id)
			why := "VS Code asked for it (input " + id + ")"
			if in.Description != "" {
				why += ": " + in.Description
			}
			c.im.addVar(name, c.entry.Name, why, in.Password)
			c.entry.notef("%s: ${%s} became ${%s}: set %s in mcpx's environment", c.field, v, name, name)
			return "${" + name + "}"
		case v == "userHome":
			return "${HOME}"
		case v == "pathSeparator" || v == "/":
			return "/"
		case v == "workspaceFolder" || v == "workspaceFolderBasename":
			if c.project == "" {
				err = skipf("%s: ${%s} has no value outside a project, and this file is not a project's", c.field, v)
				return m
			}
			val := c.project
			if v == "workspaceFolderBasename" {
				val = filepath.Base(c.project)
			}
			c.entry.notef("%s: ${%s} became %s", c.field, v, val)
			return literal(val)
		}
		err = skipf("%s: mcpx has nothing for the host's variable ${%s}", c.field, v)
		return m
	})
	return out, err
}

var envName = lazyRegexp(`^[A-Za-z_][A-Za-z0-9_]*$`)

// inputVar turns an input id into an environment variable name:
// "github-token" -> GITHUB_TOKEN.
func inputVar(id string) string {
	n := strings.ToUpper(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(id, "_"))
	n = strings.Trim(n, "_")
	if n == "" || (n[0] >= '0' && n[0] <= '9') {
		n = "INPUT_" + n
	}
	return n
}

var claudeVar = lazyRegexp(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// substClaude keeps Claude Code's ${VAR} and ${VAR:-default}, which mean
// in mcpx what they mean in Claude Code; any other "${" is literal.
func substClaude(s string, c *substCtx) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		s = s[i:]
		if m := claudeVar().FindStringSubmatch(s); m != nil && strings.HasPrefix(s, m[0]) {
			if m[2] == "" {
				c.im.addVar(m[1], c.entry.Name, "the host read it from its environment", false)
			}
			b.WriteString(m[0])
			s = s[len(m[0]):]
			continue
		}
		b.WriteString("$${")
		s = s[2:]
	}
}

var opencodeVar = lazyRegexp(`\{(env|file):([^}]*)\}`)

// substOpencode maps opencode's {env:VAR} to ${VAR}; {file:PATH} has no
// counterpart (mcpx does not read secrets from files), so a server that
// uses it is skipped.
func substOpencode(s string, c *substCtx) (string, error) {
	var err error
	s = literal(s)
	out := opencodeVar().ReplaceAllStringFunc(s, func(m string) string {
		sm := opencodeVar().FindStringSubmatch(m)
		if sm[1] == "file" {
			err = skipf("%s: {file:%s}: mcpx does not read values from files; put the value in an environment variable and write ${NAME}", c.field, sm[2])
			return m
		}
		if !envName().MatchString(sm[2]) {
			err = skipf("%s: {env:%s} is not a variable name mcpx can read", c.field, sm[2])
			return m
		}
		c.im.addVar(sm[2], c.entry.Name, "the host read it from its environment", false)
		return "${" + sm[2] + "}"
	})
	return out, err
}

var geminiVar = lazyRegexp(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// substGemini maps Gemini CLI's $VAR and ${VAR} to ${VAR}.
func substGemini(s string, c *substCtx) (string, error) {
	var b strings.Builder
	last := 0
	for _, m := range geminiVar().FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(literal(s[last:m[0]]))
		name := ""
		if m[2] >= 0 {
			name = s[m[2]:m[3]]
		} else {
			name = s[m[4]:m[5]]
		}
		c.im.addVar(name, c.entry.Name, "the host read it from its environment", false)
		b.WriteString("${" + name + "}")
		last = m[1]
	}
	b.WriteString(literal(s[last:]))
	return b.String(), nil
}

// substLiteral is for hosts that expand nothing (Claude Desktop, Codex).
func substLiteral(s string, _ *substCtx) (string, error) { return literal(s), nil }

// lazyRegexp compiles expr on first use: most mcpx processes never read a
// host's configuration, and all of them would compile it at start-up.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
