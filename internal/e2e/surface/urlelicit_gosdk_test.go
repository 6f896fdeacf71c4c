package surface

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestGoSDKURLRequired: the demo's gated tool on a legacy upstream, which
// answers -32042 until its URL elicitation is complete, called by go-sdk
// hosts through mcpx. A 2025-11-25 host gets the -32042 with the
// upstream's elicitation (go-sdk does not retry by itself). A 2026-07-28
// host gets input_required instead, which go-sdk hands to its elicitation
// handler as URL mode, without elicitationId, and retries: it gets the
// result.
func TestGoSDKURLRequired(t *testing.T) {
	for _, hostVersion := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(hostVersion+"-host", func(t *testing.T) {
			mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
				e := mcpxtest.NewEnv(t)
				cfg := e.WriteConfig(nil, harness.LegacyDemo)
				cmd := harness.ServeCommand(e, mode, cfg)
				var mu sync.Mutex
				var asked []*mcp.ElicitParams
				client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-e2e-gosdk-url", Version: "1"}, &mcp.ClientOptions{
					Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
						Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						mu.Lock()
						asked = append(asked, req.Params)
						mu.Unlock()
						return &mcp.ElicitResult{Action: "accept"}, nil
					},
				})
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second},
					&mcp.ClientSessionOptions{ProtocolVersion: hostVersion})
				if err != nil {
					t.Fatalf("connecting: %v", err)
				}
				defer cs.Close()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__gated", Arguments: map[string]any{"gate": "sdk"}})
				if hostVersion == "2025-11-25" {
					var rpcErr *jsonrpc.Error
					if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeURLElicitationRequired {
						t.Fatalf("CallTool: %v, %v; want the upstream's -32042", res, err)
					}
					var data struct{ Elicitations []mcp.ElicitParams }
					if json.Unmarshal(rpcErr.Data, &data) != nil || len(data.Elicitations) != 1 || data.Elicitations[0].ElicitationID != "gate-sdk" ||
						data.Elicitations[0].URL != "https://example.test/connect?gate=sdk&from=demo" {
						t.Errorf("the -32042's data %s", rpcErr.Data)
					}
					return
				}
				if err != nil || res.IsError {
					t.Fatalf("CallTool: %+v, %v", res, err)
				}
				got, _ := json.Marshal(res.StructuredContent)
				if string(got) != `{"gate":"sdk","refused":1}` {
					t.Errorf("result %s", got)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(asked) != 1 || asked[0].Mode != "url" || asked[0].URL != "https://example.test/connect?gate=sdk&from=demo" || asked[0].ElicitationID != "" {
					got, _ := json.Marshal(asked)
					t.Errorf("the host was asked %s, want one URL elicitation without elicitationId", got)
				}
			})
		})
	}
}
