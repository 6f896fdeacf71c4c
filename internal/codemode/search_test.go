package codemode

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mcpx/internal/relay"
)

// TestSearchBounded: mcpx.search refuses a query past its bounds, naming
// them, and a search asked for once its script has ended (its deadline)
// ends at once with the cause naming the script's timeout.
func TestSearchBounded(t *testing.T) {
	e, _ := testEngine(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := e.Exec(ctx, Script{Name: "seeker", Code: `
		const found = await mcpx.search("echo");
		let refused = "";
		try { await mcpx.search("ab ".repeat(400)) } catch (e) { refused = e.message }
		return { first: found[0].name, refused };`})
	if err != nil || out.Err != nil {
		t.Fatalf("%v, %v", out.Err, err)
	}
	var got struct{ First, Refused string }
	if json.Unmarshal(out.Value, &got) != nil || got.First != "demo__echo" || got.Refused != "mcpx.search: the query is 1200 bytes, past the limit of 1024" {
		t.Errorf("value %s", out.Value)
	}

	sctx, stop := context.WithCancelCause(ctx)
	stop(&StopError{Script: "late", Why: &relay.Cause{Kind: relay.HardTimeout, After: 5 * time.Second}})
	s := &Script{Name: "late"}
	h := &host{e: e, s: s, t: startTimers(time.Minute, time.Minute, func(*relay.Cause) {})}
	defer h.t.stop()
	res, err := h.Call(sctx, "search", json.RawMessage(`{"query":"echo"}`))
	if err == nil || !strings.Contains(err.Error(), "script late stopped: hard maximum of 5s reached") {
		t.Errorf("a search after its script's deadline: %s, %v; want the script's timeout", res, err)
	}
}

// TestDeadlineCancelsInnerCalls: a script's hard maximum ends its work in
// the daemon too: its inner call is cancelled upstream with a cause that
// names the script and its timeout.
func TestDeadlineCancelsInnerCalls(t *testing.T) {
	e, record := testEngine(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The upstream is started first: its start must not use the timeout.
	if out, err := e.Exec(ctx, Script{Name: "warm", Code: `return await tools.demo.echo({ n: 1 })`}); err != nil || out.Err != nil {
		t.Fatalf("starting the upstream: %v, %v", out.Err, err)
	}
	out, err := e.Exec(ctx, Script{Name: "slow", Timeout: 3 * time.Second, Code: `await tools.demo.wait({ seconds: 20 })`})
	const want = "script slow stopped: hard maximum of 3s reached"
	if err != nil || out.Err == nil || out.Err.Error() != want {
		t.Fatalf("%v, %v; want %q", out.Err, err, want)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(cancelReasons(t, record)) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := cancelReasons(t, record); len(got) != 1 || got[0] != want {
		t.Errorf("upstream cancels %q, want %q", got, want)
	}
}
