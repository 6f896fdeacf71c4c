package cli

import (
	"strings"
	"testing"

	"mcpx/internal/apitype"
)

func TestPrintMemory(t *testing.T) {
	var b strings.Builder
	printMemory(&b, []apitype.ProcessMemory{
		{Role: "daemon", PID: 10, RSS: 11_744_051, PSS: 6 << 20},
		{Role: "server", Server: "demo", PID: 11, RSS: 8 << 20, PSS: 4_089_446},
		{Role: "sandbox", PID: 12, RSS: 27 << 20, PSS: 5 << 20},
	})
	want := `
MEMORY (of each of mcpx's processes, from /proc)
PROCESS               PID  RESIDENT  SHARE (PSS)
daemon                10   11.2 MB   6.0 MB
server demo           11   8.0 MB    3.9 MB
sandbox child (warm)  12   27.0 MB   5.0 MB
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	printMemory(&b, nil)
	if b.Len() != 0 {
		t.Errorf("no figures printed %q, want nothing", b.String())
	}
}
