package relay

import (
	"context"
	"encoding/json"
	"testing"

	"mcpx/internal/config"
)

// takingBridge answers every call itself, and sees what the relay counts
// while it runs.
type takingBridge struct {
	r        *Relay
	calls    int
	inFlight int
}

func (b *takingBridge) CallTool(_ context.Context, _ *Entry, c Call) (json.RawMessage, error) {
	b.calls++
	b.inFlight = b.r.InFlight()[c.Server]
	return json.RawMessage(`{"content":[]}`), nil
}

// TestBridgeTakesEveryCall: with a Bridge set, CallTool hands it the
// call, counted as under way while it runs, and returns its outcome.
func TestBridgeTakesEveryCall(t *testing.T) {
	r := New(config.Default("mcpx"), nil, NewRegistry(), nil)
	b := &takingBridge{r: r}
	r.SetBridge(b)
	res, err := r.CallTool(context.Background(), nil, Call{Server: "demo", Tool: "echo"})
	if err != nil || string(res) != `{"content":[]}` {
		t.Fatalf("CallTool = %s, %v; want the bridge's result", res, err)
	}
	if b.calls != 1 || b.inFlight != 1 {
		t.Errorf("the bridge ran %d calls, with %d in flight; want 1 and 1", b.calls, b.inFlight)
	}
	if n := r.InFlight()["demo"]; n != 0 {
		t.Errorf("%d calls still counted after it returned", n)
	}
}
