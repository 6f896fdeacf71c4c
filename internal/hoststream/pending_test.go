package hoststream

import (
	"slices"
	"testing"

	"mcpx/internal/apitype"
	"mcpx/internal/jsonrpc"
)

// see feeds the ledger one host line, as either side does.
func see(t *testing.T, l ledger, line string) {
	t.Helper()
	msg, err := jsonrpc.Decode([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	saw(l, msg, []byte(line))
}

// TestLedger: serve's ledger learns the host's requests, forgets what is
// answered or cancelled, ignores serve's own replay, and keeps the
// handshake to replay under the replay id.
func TestLedger(t *testing.T) {
	var s hostState
	see(t, &s, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	see(t, &s, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	see(t, &s, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}`)
	see(t, &s, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"y"}}`)
	see(t, &s, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	see(t, &s, `{"jsonrpc":"2.0","id":`+apitype.HandoffReplayID+`,"method":"initialize","params":{}}`)
	s.settle("1") // initialize answered

	ids := make([]string, 0)
	for id := range s.take() {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{`"a"`}) {
		t.Errorf("pending %q, want only \"a\" (1 answered, 3 cancelled, the replay not the host's)", ids)
	}
	if len(s.take()) != 0 {
		t.Error("take left ids behind")
	}

	line, initialized := s.replay()
	msg, err := jsonrpc.Decode(line)
	if err != nil || msg.Method != "initialize" || msg.ID.String() != apitype.HandoffReplayID || !initialized {
		t.Errorf("replay %s (initialized %v), want the host's initialize under the replay id, initialized", line, initialized)
	}
}

// TestLedgerNoHandshake: a host that never initialized has nothing to
// replay.
func TestLedgerNoHandshake(t *testing.T) {
	var s hostState
	see(t, &s, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if line, initialized := s.replay(); line != nil || initialized {
		t.Errorf("replay %s, %v; want none", line, initialized)
	}
}
