package hostserver

import (
	"testing"

	"mcpx/internal/jsonrpc"
)

// TestClientName: a 2026-07-28 request's clientInfo.name, and "" (the
// default profile) for whatever else a host sends there; the same again,
// as the memo of the last one answers it, and after another.
func TestClientName(t *testing.T) {
	s := &Server{}
	for _, tc := range []struct{ meta, want string }{
		{`{"io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1"}}`, "claude-code"},
		{`{"io.modelcontextprotocol/clientInfo":{"name":"Visual Studio Code"}}`, "Visual Studio Code"},
		{`{}`, ""},
		{`{"io.modelcontextprotocol/clientInfo":null}`, ""},
		{`{"io.modelcontextprotocol/clientInfo":"claude-code"}`, ""},
		{`{"io.modelcontextprotocol/clientInfo":{"name":7}}`, ""},
		{`{"io.modelcontextprotocol/clientInfo":{"name":null}}`, ""},
		{`{"io.modelcontextprotocol/clientInfo":{"Name":"claude-code"}}`, ""},
	} {
		meta, err := jsonrpc.ParseObject([]byte(tc.meta))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if got := s.clientName(meta); got != tc.want {
				t.Errorf("clientName(%s) #%d = %q, want %q", tc.meta, i+1, got, tc.want)
			}
		}
	}
}

func TestLessID(t *testing.T) {
	for i, want := range [][2]string{{"host-2", "host-10"}, {"host-10", "http-1"}, {"host-1", "host-2"}} {
		if !lessID(want[0], want[1]) || lessID(want[1], want[0]) {
			t.Errorf("%d: want %s before %s", i, want[0], want[1])
		}
	}
}
