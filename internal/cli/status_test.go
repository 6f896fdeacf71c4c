package cli

import (
	"bytes"
	"testing"

	"mcpx/internal/apitype"
)

// TestPrintHosts: each connected host with its profile, in words; a
// host's name is shown without control characters.
func TestPrintHosts(t *testing.T) {
	var b bytes.Buffer
	printHosts(&b, []apitype.ConnectedHost{
		{ID: "host-1", Client: "claude-code", Protocol: "2025-11-25", Profile: apitype.HostProfile{Name: "claude-code", TimeoutMs: 300_000, ResetOnProgress: true, Source: "builtin"}},
		{ID: "host-2", Profile: apitype.HostProfile{TimeoutMs: 60_000, Source: "default"}},
		{ID: "http-3", Client: "Visual Studio Code", Protocol: "2026-07-28", Profile: apitype.HostProfile{Name: "Visual Studio Code", Source: "builtin"}},
		{ID: "http-4", Client: "evil\x1b[2Jname", Protocol: "2025-06-18", Profile: apitype.HostProfile{Name: "evil\x1b[2Jname", TimeoutMs: 1500, Source: "config"}},
	})
	want := `  HOST    CLIENT               PROTOCOL    TIMER                    PROFILE
  host-1  claude-code          2025-11-25  5m0s, reset by progress  builtin
  host-2  (no clientInfo yet)  -           1m0s, hard               default
  http-3  Visual Studio Code   2026-07-28  none                     builtin
  http-4  evil [2Jname         2025-06-18  1.5s, hard               config
`
	if got := b.String(); got != want {
		t.Errorf("printHosts printed\n%s\nwant\n%s", got, want)
	}
	b.Reset()
	printHosts(&b, nil)
	if b.Len() != 0 {
		t.Errorf("no hosts printed %q", b.String())
	}
}
