package cli

import (
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
)

// TestStatusNamesCollisions: a tool name collision the daemon reports is
// printed, with its way out.
func TestStatusNamesCollisions(t *testing.T) {
	var out strings.Builder
	env := &Env{Stdout: &out}
	st := &apitype.Status{PID: 1, Started: time.Now(), ToolNameCollisions: []string{`tool name "a___x" is both a's "_x" (listed and called) and a_'s "x" (hidden): rename a server, or set mcpx.toolNames.separator to one neither name holds`}}
	printStatus(env, st, time.Now())
	if !strings.Contains(out.String(), `collision: tool name "a___x"`) {
		t.Fatalf("mcpx status does not name the collision:\n%s", out.String())
	}
}
