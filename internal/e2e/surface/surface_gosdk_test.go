package surface

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestGoSDKSurfaceHost: the official go-sdk client (a 2025-11-25 session,
// and 2026-07-28) as a host of mcpx's resources, prompts, completion, subscriptions and
// logging over stdio,
// in both run modes, against the two surface demos (a: 2026-07-28, b:
// legacy). Its iterators page through mcpx's own cursors.
func TestGoSDKSurfaceHost(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) { testGoSDKSurface(t, mode, version) })
		})
	}
}

func testGoSDKSurface(t *testing.T, mode mcpxtest.Mode, version string) {
	{
		e := mcpxtest.NewEnv(t)
		cfg := surfaceConfig(e)
		cmd := harness.ServeCommand(e, mode, cfg)
		updated := make(chan string, 4)
		// Logging is deprecated in 2026-07-28 (SEP-2577) but served in
		// every revision mcpx speaks; hosts still use it.
		//lint:ignore SA1019 mcpx relays logging, deprecated or not
		logs := make(chan *mcp.LoggingMessageParams, 8)
		client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-e2e-gosdk-surface", Version: "1"}, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
			//lint:ignore SA1019 see above
			LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) { logs <- r.Params },
		})
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connecting: %v", err)
		}
		defer func() {
			if err := cs.Close(); err != nil {
				t.Errorf("closing: %v", err)
			}
		}()

		var uris []string
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatalf("listing resources: %v", err)
			}
			uris = append(uris, r.URI)
		}
		if len(uris) != 6 || !slices.Contains(uris, "mcpx://a/demo://shared/motd") || !slices.Contains(uris, "demo://b/config.json") {
			t.Errorf("resources = %q", uris)
		}
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://a/items/12"})
		if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "Item 12 of a." {
			t.Errorf("ReadResource by a's template: %+v, %v", rr, err)
		}
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://shared/motd"})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != -32602 {
			t.Errorf("reading the ambiguous URI: %v, want -32602", err)
		}
		var prompts []string
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				t.Fatalf("listing prompts: %v", err)
			}
			prompts = append(prompts, p.Name)
		}
		if !slices.Equal(prompts, []string{"a__greet", "a__plain", "b__greet", "b__plain"}) {
			t.Errorf("prompts = %q", prompts)
		}
		gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "a__greet", Arguments: map[string]string{"name": "Go"}})
		if err != nil || len(gp.Messages) != 1 {
			t.Fatalf("GetPrompt: %+v, %v", gp, err)
		}
		if tc, ok := gp.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Say hello to Go from a." {
			t.Errorf("prompt message = %+v", gp.Messages[0].Content)
		}
		cr, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "demo://a/items/{id}"},
			Argument: mcp.CompleteParamsArgument{Name: "id", Value: "4"}})
		if err != nil || !slices.Equal(cr.Completion.Values, []string{"42"}) {
			t.Errorf("Complete: %+v, %v", cr, err)
		}

		// In 2026-07-28 the go-sdk subscribes through subscriptions/listen.
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "demo://b/readme"}); err != nil {
			t.Fatalf("Subscribe: %v", err)
		}
		// The go-sdk's Subscribe does not wait for the listen's
		// acknowledgement in 2026-07-28: touch until the subscription is
		// in place upstream (the demo says whether it was).
		deadline := time.Now().Add(harness.WaitLong)
		for {
			touched, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "b__touch", Arguments: map[string]any{"uri": "demo://b/readme"}})
			if err != nil {
				t.Fatalf("b__touch: %v", err)
			}
			tc, _ := touched.Content[0].(*mcp.TextContent)
			if tc != nil && tc.Text == "updated demo://b/readme" {
				break
			}
			if version == "2025-11-25" || time.Now().After(deadline) {
				t.Fatalf("b__touch says %+v; b's wire:\n%s", touched.Content[0], strings.Join(e.WireLog("b"), "\n"))
			}
			time.Sleep(20 * time.Millisecond)
		}
		// The first update after the upstream's subscription is in place
		// reaches the host, even one that comes before the listen's
		// acknowledgement: mcpx keeps it and sends it right after the ack.
		select {
		case u := <-updated:
			if u != "demo://b/readme" {
				t.Errorf("update for %q", u)
			}
		case <-time.After(harness.WaitLong):
			t.Fatalf("no resources/updated within %s of the touch", harness.WaitLong)
		}
		if version != "2025-11-25" {
			return // b's log messages come on its stdout, tied to no 2026 request
		}
		//lint:ignore SA1019 see above
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
			t.Fatalf("SetLoggingLevel: %v", err)
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "b__log", Arguments: map[string]any{"levels": []string{"info", "error"}, "message": "go"}}); err != nil {
			t.Fatalf("b__log: %v", err)
		}
		select {
		case m := <-logs:
			if m.Level != "error" || m.Data != "error: go" {
				t.Errorf("log message %+v, want the error only", m)
			}
		case <-time.After(harness.WaitLong):
			t.Fatal("no log message")
		}
	}
}
