package hostserver

import (
	"encoding/json"
	"slices"
	"strings"

	"mcpx/internal/jobs"
)

// What a host's tool filter (toolfilter.go) decides beyond its tools:
// which servers it may use, and so whose resources, resource templates,
// prompts, completions, log messages and names it gets; and which of its
// principal's jobs and tasks it may see.

// usesServer reports whether the host may use server: whether its filter
// can allow a tool of the server, judged from the patterns alone (so that
// it needs no listing, and holds for a server that runs no tools): a tool
// of the server that no pattern names by its own name (the rule for the
// server's tools at large, e.g. "demo__*", "!secret__*", "*"), or one
// that an allowing pattern names, its wildcards filled in ("files__read",
// "*__read"), is allowed. A host without a filter uses every server.
func (h hostFilter) usesServer(server string) bool {
	if h.f == nil {
		return true
	}
	prefix := server + h.sep
	// A tool name longer than every pattern, of a byte none has: only a
	// "*" can match it.
	longest := 0
	for _, p := range h.f.Patterns {
		longest = max(longest, len(p))
	}
	if ok, _ := h.f.Allows(prefix + strings.Repeat("\x00", longest+1)); ok {
		return true
	}
	for _, p := range h.f.Patterns {
		if strings.HasPrefix(p, "!") {
			continue
		}
		for _, name := range instances(p, prefix) {
			if ok, _ := h.f.Allows(name); ok {
				return true
			}
		}
	}
	return false
}

// filterFor is the filter of the host known by client (its
// clientInfo.name) and the token it holds, for what is answered before,
// or outside, a request: the initialize and server/discover results, and
// upstream log messages.
func (hs *hostSession) filterFor(client string) hostFilter {
	pol := hs.srv.relay.Policy(hs.who.WithClient(client))
	f, sep := pol.Tools()
	return hostFilter{pol: pol, f: f, sep: sep}
}

// mayUse reports whether the host of a legacy session may use server, by
// the clientInfo.name of its initialize.
func (hs *hostSession) mayUse(server string) bool {
	hs.mu.Lock()
	client := hs.clientName
	hs.mu.Unlock()
	return hs.filterFor(client).usesServer(server)
}

// visible is usesServer as the catalog takes it: nil for a host without
// a filter, which sees every server at no cost.
func (h hostFilter) visible() func(server string) bool {
	if h.f == nil {
		return nil
	}
	return h.usesServer
}

// instances returns names that begin with prefix and that glob pattern
// matches: one for each way the pattern can match the prefix, the rest of
// the pattern after it with its "*" left out and its "?" as "x". None if
// the pattern cannot match a name that begins with prefix.
func instances(pattern, prefix string) []string {
	// at: the positions in pattern reached having matched prefix so far.
	at, next := make([]bool, len(pattern)+1), make([]bool, len(pattern)+1)
	closure := func(set []bool) {
		for i := 0; i < len(pattern); i++ {
			if set[i] && pattern[i] == '*' {
				set[i+1] = true // "*" matching nothing
			}
		}
	}
	at[0] = true
	closure(at)
	for i := 0; i < len(prefix); i++ {
		clear(next)
		moved := false
		for s := 0; s < len(pattern); s++ {
			switch {
			case !at[s]:
			case pattern[s] == '*':
				next[s], moved = true, true
			case pattern[s] == '?' || pattern[s] == prefix[i]:
				next[s+1], moved = true, true
			}
		}
		if !moved {
			return nil
		}
		closure(next)
		at, next = next, at
	}
	var out []string
	for s, ok := range at {
		if !ok {
			continue
		}
		name := []byte(prefix)
		for _, c := range []byte(pattern[s:]) {
			switch c {
			case '*':
			case '?':
				name = append(name, 'x')
			default:
				name = append(name, c)
			}
		}
		if !slices.Contains(out, string(name)) {
			out = append(out, string(name))
		}
	}
	return out
}

// scriptJobParams are the params a job of a script this host runs keeps:
// the filter the script ran under (jobs.ScriptParams).
func (h hostFilter) scriptJobParams() json.RawMessage { return jobs.ScriptParams(h.pol) }
