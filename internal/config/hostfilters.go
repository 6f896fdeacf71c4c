package config

import (
	"fmt"
	"strings"
)

// ToolFilter is one host's "tools" list in mcpx.hosts: the tools the host
// sees (tools/list, mcpx_search) and may call (directly or by mcpx_call).
//
// Each pattern matches a tool's full name, <server><separator><tool>
// (e.g. "files__read"), whatever mcpx.toolNames.prefix says. In a pattern
// "*" stands for any run of characters (none included) and "?" for one;
// every other character stands for itself. A pattern that starts with "!"
// refuses what it matches; any other allows it.
//
// The patterns are read in order and the last one that matches a tool
// decides. The first pattern sets what becomes of a tool no pattern
// matches: if it allows, such a tool is refused (the list names what the
// host gets); if it refuses, such a tool is allowed (the list names what
// the host does not get). So ["files__*"] allows the files server's
// tools alone, ["!files__delete_*"] every tool but those,
// ["files__*", "!files__delete_*"] the files server's tools but those,
// and ["!files__*", "files__read"] every tool but the files server's,
// except files__read.
// mcpx's own mcpx_search and mcpx_call are always listed; they find and
// call only allowed tools.
type ToolFilter struct {
	// Patterns as written, in order.
	Patterns []string
	// Path names the list in the config, for messages:
	// "mcpx.hosts.NAME.tools".
	Path string
	// allowList is set when the first pattern allows: then a tool no
	// pattern matches is refused.
	allowList bool
	// anyOf, if set, makes the filter the union of these (a person's
	// groups, [Config.GroupTools]): a tool is allowed if one of them
	// allows it; Patterns then holds all of theirs, in order.
	anyOf []*ToolFilter
}

// Allows reports whether the filter lets a host use the tool whose full
// name is name; why says which rule decided, for a refusal's message.
func (f *ToolFilter) Allows(name string) (ok bool, why string) {
	if f == nil {
		return true, ""
	}
	if f.anyOf != nil {
		return f.anyAllows(name)
	}
	for i := len(f.Patterns) - 1; i >= 0; i-- {
		p := f.Patterns[i]
		deny := strings.HasPrefix(p, "!")
		if glob(strings.TrimPrefix(p, "!"), name) {
			return !deny, fmt.Sprintf("rule %q (%s[%d])", p, f.Path, i)
		}
	}
	if f.allowList {
		return false, "no rule of " + f.Path + " allows it"
	}
	return true, ""
}

// glob reports whether name matches pattern, where "*" is any run of
// characters and "?" one character.
func glob(pattern, name string) bool {
	// The classic iterative matcher: on a mismatch, let the last "*"
	// take one more character.
	p, n := 0, 0
	star, mark := -1, 0
	for n < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == '*': // before the literal test: a "*" in the name is no wildcard
			star, mark = p, n
			p++
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == name[n]):
			p, n = p+1, n+1
		case star >= 0:
			p, mark = star+1, mark+1
			n = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// maxToolPatterns bounds one host's list.
const maxToolPatterns = 1000

// toolFilter reads a host's "tools": an array of patterns.
func (p *parser) toolFilter(n *node, at path) (*ToolFilter, error) {
	if n.kind != kindArray {
		return nil, p.errorf(n.off, at, "must be an array of tool name patterns")
	}
	if len(n.elems) == 0 {
		return nil, p.errorf(n.off, at, `is empty: leave it out to allow every tool, or write ["!*"] to allow none`)
	}
	if len(n.elems) > maxToolPatterns {
		return nil, p.errorf(n.off, at, "has %d patterns, more than %d", len(n.elems), maxToolPatterns)
	}
	f := &ToolFilter{Path: string(at)}
	for i, e := range n.elems {
		at := at.index(i)
		s, err := p.str(e, at)
		if err != nil {
			return nil, err
		}
		if strings.TrimPrefix(s, "!") == "" {
			return nil, p.errorf(e.off, at, "must be a tool name pattern, e.g. \"files__*\" or \"!files__delete_*\"")
		}
		if i == 0 {
			f.allowList = !strings.HasPrefix(s, "!")
		}
		f.Patterns = append(f.Patterns, s)
	}
	return f, nil
}

// HostTools returns the tool filter of the host known by names (its
// token's name, then its clientInfo.name; "" names are skipped): the
// first of them mcpx.hosts gives a "tools" list; nil if none does.
func (c *Config) HostTools(names ...string) *ToolFilter {
	for _, n := range names {
		if h := c.Hosts[n]; n != "" && h != nil && h.Tools != nil {
			return h.Tools
		}
	}
	return nil
}
