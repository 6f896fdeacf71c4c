package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// gosdkVersions are the revisions a go-sdk host asks for: the oldest and
// newest initialize-based ones, and 2026-07-28 (server/discover).
var gosdkVersions = []string{"2024-11-05", "2025-11-25", "2026-07-28"}

// TestGoSDKHost runs the go-sdk v1.8.0 client as a host spawning
// `mcpx serve` (daemon mode) and `mcpx serve --in-process`, in each
// revision: it lists the tools, calls the demo's export with progress and
// its echo, and cancels a call by cancelling its context.
//
// The go-sdk client hands progress to its handler on another goroutine
// than the one that completes the call, so it may lose the last progress
// notifications of a call (see docs/research/gosdk.md): progress is
// checked for presence, token and order, not for completeness.
func TestGoSDKHost(t *testing.T) {
	t.Parallel()
	for _, version := range gosdkVersions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
				testGoSDKHost(t, mode, version)
			})
		})
	}
}

func testGoSDKHost(t *testing.T, mode mcpxtest.Mode, version string) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	prog := harness.NewProgressLog()
	cs := harness.ConnectGoSDK(t, e, mode, cfg, version, prog)

	ir := cs.InitializeResult()
	if ir == nil || ir.ProtocolVersion != version {
		t.Fatalf("negotiated revision: %+v, want %s", ir, version)
	}
	if ir.ServerInfo == nil || ir.ServerInfo.Name == "" {
		t.Errorf("no serverInfo in %+v", ir)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// tools/list: the demo's tools, prefixed, and the meta-tools.
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"demo__export", "demo__echo", "mcpx_search", "mcpx_call"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}

	// A slow export with progress.
	params := &mcp.CallToolParams{Name: "demo__export", Arguments: map[string]any{"seconds": 0.5, "steps": 5}}
	params.SetProgressToken("gosdk-export")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("CallTool demo__export: %v", err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("export result: %+v", res)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "exported 1000 records in 5 parts" {
		t.Errorf("export text: %#v", res.Content[0])
	}
	if diff := cmp.Diff(map[string]any{"records": 1000.0, "parts": 5.0}, res.StructuredContent); diff != "" {
		t.Errorf("export structuredContent (-want +got):\n%s", diff)
	}
	notes := prog.Wait(t, "gosdk-export", 1, 10*time.Second)
	// 2024-11-05 has no progress message: mcpx removes it for such hosts.
	harness.CheckGoSDKProgress(t, notes, 5, version != "2024-11-05")
	t.Logf("export: %d of 5 progress notifications reached the go-sdk handler", len(notes))

	// Cancel a call by cancelling its context, once it has made progress.
	callCtx, cancelCall := context.WithCancel(ctx)
	defer cancelCall()
	params = &mcp.CallToolParams{Name: "demo__export", Arguments: map[string]any{"seconds": 60, "steps": 600}}
	params.SetProgressToken("gosdk-cancel")
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, params)
		errc <- err
	}()
	prog.Wait(t, "gosdk-cancel", 1, 30*time.Second)
	cancelCall()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled CallTool returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("CallTool did not return within 10s of its context being cancelled")
	}
	isCancel := func(ev demo.Event) bool {
		return ev.Event == demo.EventCancelled && ev.Known != nil && *ev.Known && ev.Tool == "export"
	}
	got := e.WaitRecord("demo", 10*time.Second, isCancel)
	// go-sdk v1.8.0 sends the reason "context canceled"; mcpx sends its own.
	if want := "cancelled by the host: context canceled"; got.Reason != want {
		t.Errorf("upstream cancellation reason %q, want %q", got.Reason, want)
	}
	var exports []demo.Event
	for _, ev := range e.Records("demo") {
		if ev.Event == demo.EventRequest && ev.Tool == "export" {
			exports = append(exports, ev)
		}
	}
	if len(exports) != 2 {
		t.Fatalf("the demo saw %d export requests, want 2", len(exports))
	}
	if !bytes.Equal(got.RequestID, exports[1].ID) {
		t.Errorf("cancellation names request %s, want mcpx's upstream id of the cancelled call %s", got.RequestID, exports[1].ID)
	}
	for _, ev := range exports {
		if string(ev.ProgressToken) == `"gosdk-export"` || string(ev.ProgressToken) == `"gosdk-cancel"` {
			t.Errorf("the upstream saw the host's progress token %s, want one of mcpx's own", ev.ProgressToken)
		}
	}
	if len(exports[0].ProgressToken) == 0 || bytes.Equal(exports[0].ProgressToken, exports[1].ProgressToken) {
		t.Errorf("upstream progress tokens %s and %s, want a fresh one per call", exports[0].ProgressToken, exports[1].ProgressToken)
	}
	e.WaitRecord("demo", 10*time.Second, func(ev demo.Event) bool {
		return ev.Event == demo.EventFinished && bytes.Equal(ev.ID, exports[1].ID) && ev.Outcome == demo.OutcomeCancelled
	})
	if n := harness.CountDemoCancels(e.Records("demo")); n != 1 {
		t.Errorf("the demo received %d cancellations, want 1", n)
	}

	// The session is still usable, and echo's structuredContent comes back
	// as sent.
	args := map[string]any{"n": 42, "s": "héllo \"quoted\"", "list": []any{1, 2.5, "x"}, "nested": map[string]any{"b": true, "nil": nil}}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: args})
	if err != nil {
		t.Fatalf("CallTool demo__echo: %v", err)
	}
	want := gosdkRoundTrip(t, args)
	if diff := cmp.Diff(want, res.StructuredContent); diff != "" {
		t.Errorf("echo structuredContent (-want +got):\n%s", diff)
	}
	if len(res.Content) != 1 {
		t.Fatalf("echo content: %+v", res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("echo content: %#v", res.Content[0])
	}
	var text any
	if err := json.Unmarshal([]byte(tc.Text), &text); err != nil {
		t.Fatalf("echo text %q: %v", tc.Text, err)
	}
	if diff := cmp.Diff(want, text); diff != "" {
		t.Errorf("echo text (-want +got):\n%s", diff)
	}
}

func gosdkRoundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
