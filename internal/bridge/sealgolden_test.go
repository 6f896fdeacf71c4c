package bridge

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestOpensStateSealedBefore: a requestState sealed by an earlier mcpx
// (the golden, under the key 100..131) opens, so replicas of two versions
// sharing a key open each other's states.
func TestOpensStateSealedBefore(t *testing.T) {
	raw, err := os.ReadFile("testdata/requeststate-v1.txt")
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, SealKeySize)
	for i := range key {
		key[i] = byte(100 + i)
	}
	s, err := sealerWithKey(key)
	if err != nil {
		t.Fatal(err)
	}
	want := holdState{Hold: 7, Principal: "alice", Server: "demo", Tool: "echo", Digest: "d1", Expires: 4102444800000, Instance: "i1"}
	golden := strings.TrimSpace(string(raw))
	st, err := s.open(golden, "alice", "d1", time.UnixMilli(0))
	if err != nil || st.Hold != want.Hold || st.Instance != want.Instance || st.Expires != want.Expires {
		t.Fatalf("open = %+v, %v; want %+v", st, err, want)
	}
	if now := s.seal(want); len(now) != len(golden) || !strings.HasPrefix(now, statePrefix) {
		t.Errorf("a state sealed now is %q, the golden %q: the layout changed", now, golden)
	}
}
