package jsonrpc_test

import (
	"testing"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// The tests and benchmarks of this package decode as mcpx does: with the
// protocol's names interned, which mcp does when it is initialized (this
// external test package links it into the test binary).

// TestInternedByMCP: a name mcp hands over decodes without allocating;
// one it does not costs its copy.
func TestInternedByMCP(t *testing.T) {
	for _, name := range mcp.Interned {
		raw := []byte(`"` + name + `"`)
		if n := testing.AllocsPerRun(100, func() { jsonrpc.Unquote(raw) }); n != 0 {
			t.Errorf("Unquote(%s) allocates %v times; mcp interned it", raw, n)
		}
	}
	raw := []byte(`"not/a/method"`)
	if n := testing.AllocsPerRun(100, func() { jsonrpc.Unquote(raw) }); n != 1 {
		t.Errorf("Unquote(%s) allocates %v times, want 1: nothing interned it", raw, n)
	}
}
