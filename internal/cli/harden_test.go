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

// TestWordTruncate: a description cut for a terminal ends at a word, with
// a mark, and fits.
func TestWordTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		cols int
		want string
	}{
		{"Export records in parts, reporting progress", 100, "Export records in parts, reporting progress"},
		{"Export records in parts, reporting progress", 20, "Export records in…"},
		{"Export records in parts, reporting progress", 27, "Export records in parts…"},
		{"Supercalifragilistic", 10, "Supercali…"},
	} {
		if got := wordTruncate(tc.in, tc.cols); got != tc.want || progressTruncate(got, tc.cols) != got {
			t.Errorf("wordTruncate(%q, %d) = %q, want %q", tc.in, tc.cols, got, tc.want)
		}
	}
}
