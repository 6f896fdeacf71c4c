package jsonrpc

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Interning: a decoded member name, method or string value that is one of
// a known set is returned as the set's own string, without allocating.
// JSON-RPC's own member names are built in; the names of the protocol
// above (MCP's methods, members and _meta keys) are not this package's to
// know: its user hands them over through [Intern] (mcpx's mcp package
// does, when it is initialized).

// interned is the set added through Intern, read on every decode.
var (
	interned atomic.Pointer[map[string]string]
	internMu sync.Mutex // serializes Intern
)

// Intern adds names to the strings the decoder returns without
// allocating. It is safe for concurrent use, decoding included; meant to
// be called once, at initialization, by the protocol layer above.
func Intern(names ...string) {
	internMu.Lock()
	defer internMu.Unlock()
	m := map[string]string{}
	if old := interned.Load(); old != nil {
		m = maps.Clone(*old)
	}
	for _, s := range names {
		m[s] = s
	}
	interned.Store(&m)
}

// commonName returns, without allocating, JSON-RPC's member names and the
// names added by Intern.
func commonName(b []byte) (string, bool) {
	switch string(b) {
	case "jsonrpc":
		return "jsonrpc", true
	case "id":
		return "id", true
	case "method":
		return "method", true
	case "params":
		return "params", true
	case "result":
		return "result", true
	case "error":
		return "error", true
	}
	if m := interned.Load(); m != nil {
		s, ok := (*m)[string(b)] // the conversion does not allocate
		return s, ok
	}
	return "", false
}
