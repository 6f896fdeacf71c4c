package http

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestGoSDKHTTPHost runs the go-sdk v1.8.0 Streamable HTTP client as a host
// of mcpx's HTTP face in 2025-03-26, 2025-11-25 and 2026-07-28: it lists
// the tools, calls the demo's export with progress, and cancels a call by
// cancelling its context. A 2026-07-28 host cancels by closing the
// request's stream (the SDK also POSTs a notifications/cancelled, which
// that revision ignores); a legacy one by its notifications/cancelled POST.
// The demo upstream's record shows which: the reason mcpx sent upstream.
func TestGoSDKHTTPHost(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-03-26", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
				testGoSDKHTTPHost(t, mode, version)
			})
		})
	}
}

func testGoSDKHTTPHost(t *testing.T, mode mcpxtest.Mode, version string) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	m := harness.StartHTTP(t, e, mode, cfg, false)
	prog := harness.NewProgressLog()
	cs := harness.ConnectGoSDKHTTP(t, m, version, prog)
	if ir := cs.InitializeResult(); ir == nil || ir.ProtocolVersion != version {
		t.Fatalf("negotiated revision: %+v, want %s", ir, version)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"demo__export", "demo__burst", "mcpx_search", "mcpx_call"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}

	params := &mcp.CallToolParams{Name: "demo__export", Arguments: map[string]any{"seconds": 0.5, "steps": 5}}
	params.SetProgressToken("http-export")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("CallTool demo__export: %v", err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); res.IsError || !ok || tc.Text != "exported 1000 records in 5 parts" {
		t.Fatalf("export result: %+v", res)
	}
	// The go-sdk client may hand the last notifications to its handler
	// after CallTool returns (see TestGoSDKHost): wait for one, check all.
	notes := prog.Wait(t, "http-export", 1, 10*time.Second)
	harness.CheckGoSDKProgress(t, notes, 5, true)
	t.Logf("export: %d of 5 progress notifications reached the go-sdk handler", len(notes))

	callCtx, cancelCall := context.WithCancel(ctx)
	defer cancelCall()
	params = &mcp.CallToolParams{Name: "demo__export", Arguments: map[string]any{"seconds": 60, "steps": 600}}
	params.SetProgressToken("http-cancel")
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, params)
		errc <- err
	}()
	prog.Wait(t, "http-cancel", 1, 30*time.Second)
	cancelCall()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled CallTool returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("CallTool did not return within 10s of its context being cancelled")
	}
	got := e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool {
		return ev.Event == demo.EventCancelled && ev.Known != nil && *ev.Known && ev.Tool == "export"
	})
	want := "cancelled by the host: context canceled" // go-sdk's own reason, in its notifications/cancelled
	if version == "2026-07-28" {
		want = "cancelled by the host: it closed the request's response stream"
	}
	if got.Reason != want {
		t.Errorf("upstream cancellation reason %q, want %q", got.Reason, want)
	}
	var exports []demo.Event
	for _, ev := range e.Records("demo") {
		if ev.Event == demo.EventRequest && ev.Tool == "export" {
			exports = append(exports, ev)
		}
	}
	if len(exports) != 2 || !bytes.Equal(got.RequestID, exports[1].ID) {
		t.Fatalf("cancellation of %s; export requests %s, want the second one's", got.RequestID, harness.Describe(exports))
	}
	e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool {
		return ev.Event == demo.EventFinished && bytes.Equal(ev.ID, exports[1].ID) && ev.Outcome == demo.OutcomeCancelled
	})
	if n := harness.CountDemoCancels(e.Records("demo")); n != 1 {
		t.Errorf("the demo received %d cancellations, want 1", n)
	}

	// The session still works.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"k": 1}})
	if err != nil || res.IsError {
		t.Fatalf("echo after the cancel: %+v, %v", res, err)
	}
}
