package relay

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// metaOf decodes a recorded request's _meta.
func metaOf(t testing.TB, ev demo.Event) map[string]json.RawMessage {
	t.Helper()
	m := map[string]json.RawMessage{}
	if len(ev.Meta) > 0 {
		if err := json.Unmarshal(ev.Meta, &m); err != nil {
			t.Fatalf("recorded _meta %s: %v", ev.Meta, err)
		}
	}
	return m
}

// recordedRequest returns the demo's record of the request marked marker,
// if there is one yet.
func recordedRequest(e *mcpxtest.Env, server, marker string) (demo.Event, bool) {
	e.T.Helper()
	for _, ev := range e.Records(server) {
		if harness.HasMarker(ev, marker) {
			return ev, true
		}
	}
	return demo.Event{}, false
}

// wireLines returns the lines demo server wrote ("> ") or read ("< "),
// from its wire log, without the prefix.
func wireLines(t testing.TB, e *mcpxtest.Env, server, prefix string) []string {
	t.Helper()
	b, err := os.ReadFile(e.WireLogPath(server))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), prefix); ok {
			out = append(out, rest)
		}
	}
	return out
}
