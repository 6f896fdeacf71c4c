package surface

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestGoSDKAskHost: a go-sdk host that answers elicitation, sampling and
// roots calls the demo's ask tool through mcpx, in every era pair: a
// 2025-11-25 or 2026-07-28 host, a legacy or 2026-07-28 upstream. However
// the questions travel (server-to-client requests, input_required the
// host answers and retries, input_required mcpx bridges, or a held call),
// the tool's result holds the host's three answers.
func TestGoSDKAskHost(t *testing.T) {
	t.Parallel()
	for _, hostVersion := range []string{"2025-11-25", "2026-07-28"} {
		for _, upEra := range []string{"legacy", "auto"} {
			t.Run(hostVersion+"-host/"+upEra+"-upstream", func(t *testing.T) {
				t.Parallel()
				mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
					e := mcpxtest.NewEnv(t)
					cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo", Args: []string{"-era", upEra}})
					cmd := harness.ServeCommand(e, mode, cfg)
					client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-e2e-gosdk-ask", Version: "1"}, &mcp.ClientOptions{
						ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
							return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "gosdk-Ada"}}, nil
						},
						//lint:ignore SA1019 sampling and roots are deprecated in 2026-07-28 but still relayed; this test is about them
						CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
							//lint:ignore SA1019 see above
							return &mcp.CreateMessageResult{Role: "assistant", Model: "none", Content: &mcp.TextContent{Text: "gosdk sampled"}}, nil
						},
					})
					//lint:ignore SA1019 sampling and roots are deprecated in 2026-07-28 but still relayed; this test is about them
					client.AddRoots(&mcp.Root{URI: "file:///gosdk-root", Name: "root"})
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					defer cancel()
					cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second},
						&mcp.ClientSessionOptions{ProtocolVersion: hostVersion})
					if err != nil {
						t.Fatalf("connecting: %v", err)
					}
					defer cs.Close()
					// A 2026-07-28 upstream's input request goes to a 2026-07-28
					// host as it is, and go-sdk v1.8.0 fails on one without
					// params: that cell asks roots/list with empty params. mcpx
					// always adds them to the input requests it makes.
					roots := `{"method":"roots/list"}`
					if upEra == "auto" && hostVersion == "2026-07-28" {
						roots = `{"method":"roots/list","params":{}}`
					}
					var asks []any
					for _, q := range []string{harness.AskForm, harness.AskSamp, roots} {
						var v any
						if err := json.Unmarshal([]byte(q), &v); err != nil {
							t.Fatal(err)
						}
						asks = append(asks, v)
					}
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__ask", Arguments: map[string]any{"asks": asks}})
					if err != nil {
						t.Fatalf("CallTool: %v", err)
					}
					got, _ := json.Marshal(res.StructuredContent)
					for _, want := range []string{"gosdk-Ada", "gosdk sampled", "file:///gosdk-root"} {
						if !strings.Contains(string(got), want) {
							t.Errorf("the result lacks the host's answer %q: %s", want, got)
						}
					}
					t.Logf("%s host, %s upstream, %s: %s", hostVersion, upEra, mode, got)
				})
			})
		}
	}
}
