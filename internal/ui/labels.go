package ui

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Bounds of the metrics' label values. A call's server and tool names may
// be made up by whoever calls (a script's tools.demo.anything, a host's
// tools/call of a name no server lists): only names the catalog knows
// (or a tool its upstream answered with a result) become label values,
// at most this many, each at most this long; the rest are all counted
// under OtherLabel.
const (
	maxLabelLen   = 128  // bytes; a longer name is OtherLabel
	maxToolLabels = 1000 // (server, tool) pairs labelled by their names
	maxServers    = 200  // servers labelled by their names
)

// OtherLabel is the server or tool label of calls whose names are not
// labelled: unknown to the catalog, too long, or past the bounds.
const OtherLabel = "other"

// Known says whether server is configured (serverKnown) and whether its
// tools, as last listed, include tool (toolKnown). It must not block: it
// lists and starts nothing.
type Known func(server, tool string) (serverKnown, toolKnown bool)

// labeler turns a call's names into label values. Reads are one atomic
// load and a map lookup; a name is checked against Known once, when it
// is first labelled, and then kept (the maps only grow, up to the
// bounds, so a label a call started under is the one it ends under).
type labeler struct {
	known Known // nil: every name is known (the bounds still apply)

	tools   atomic.Pointer[map[toolKey]struct{}] // copied on write
	servers atomic.Pointer[map[string]struct{}]  // copied on write
	mu      sync.Mutex                           // serializes writers
}

type toolKey struct{ server, tool string }

// server returns the label of a server name a call carries.
func (l *labeler) server(name string) string { return l.serverLabel(name, true) }

// pooled returns the label of a server name the pool itself gives (its
// observer's events, told with the pool's lock held: Known, which asks
// the pool, is not asked).
func (l *labeler) pooled(name string) string { return l.serverLabel(name, false) }

func (l *labeler) serverLabel(name string, check bool) string {
	if m := l.servers.Load(); m != nil {
		if _, ok := (*m)[name]; ok {
			return name
		}
	}
	if len(name) > maxLabelLen {
		return OtherLabel
	}
	if check && l.known != nil {
		if known, _ := l.known(name, ""); !known {
			return OtherLabel
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.servers.Load()
	if old != nil && len(*old) >= maxServers {
		if _, ok := (*old)[name]; !ok {
			return OtherLabel
		}
		return name
	}
	m := map[string]struct{}{name: {}}
	if old != nil {
		m = maps.Clone(*old)
		m[name] = struct{}{}
	}
	l.servers.Store(&m)
	return name
}

// call returns the server and tool labels of a call. answered says the
// upstream answered it with a result: a tool it has, listed or not yet
// (a host may call a tool it listed before an upstream's restart).
func (l *labeler) call(server, tool string, answered bool) (string, string) {
	if m := l.tools.Load(); m != nil {
		if _, ok := (*m)[toolKey{server, tool}]; ok {
			return server, tool
		}
	}
	s := l.server(server)
	if s == OtherLabel || len(tool) > maxLabelLen {
		return s, OtherLabel
	}
	if !answered && l.known != nil {
		if _, known := l.known(server, tool); !known {
			return s, OtherLabel
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	k := toolKey{server, tool}
	old := l.tools.Load()
	if old != nil {
		if _, ok := (*old)[k]; ok {
			return server, tool
		}
		if len(*old) >= maxToolLabels {
			return s, OtherLabel
		}
	}
	m := map[toolKey]struct{}{k: {}}
	if old != nil {
		m = maps.Clone(*old)
		m[k] = struct{}{}
	}
	l.tools.Store(&m)
	return server, tool
}
