package e2e

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpx/internal/demo"
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
	m := startHTTP(t, e, mode, cfg, false)
	prog := newProgressLog()
	cs := connectGoSDKHTTP(t, m, version, prog)
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
	notes := prog.wait(t, "http-export", 1, 10*time.Second)
	checkGoSDKProgress(t, notes, 5, true)
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
	prog.wait(t, "http-cancel", 1, 30*time.Second)
	cancelCall()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled CallTool returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("CallTool did not return within 10s of its context being cancelled")
	}
	got := e.WaitRecord("demo", waitLong, func(ev demo.Event) bool {
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
		t.Fatalf("cancellation of %s; export requests %s, want the second one's", got.RequestID, describe(exports))
	}
	e.WaitRecord("demo", waitLong, func(ev demo.Event) bool {
		return ev.Event == demo.EventFinished && bytes.Equal(ev.ID, exports[1].ID) && ev.Outcome == demo.OutcomeCancelled
	})
	if n := countDemoCancels(e.Records("demo")); n != 1 {
		t.Errorf("the demo received %d cancellations, want 1", n)
	}

	// The session still works.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"k": 1}})
	if err != nil || res.IsError {
		t.Fatalf("echo after the cancel: %+v, %v", res, err)
	}
}

// connectGoSDKHTTP connects a go-sdk client to mcpx's HTTP face at version,
// with mcpx's token. The session is closed at cleanup.
func connectGoSDKHTTP(t *testing.T, m *httpMCPX, version string, prog *progressLog) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearer{m.Token, http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-e2e-gosdk-http", Version: "1"}, &mcp.ClientOptions{
		Capabilities:                &mcp.ClientCapabilities{},
		ProgressNotificationHandler: prog.handle,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: m.URL, HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to %s at %s: %v", m.URL, version, err)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Errorf("closing the session: %v", err)
		}
	})
	return cs
}

// bearer adds the token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}
