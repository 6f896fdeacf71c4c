package harness

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ExecScript runs a script through mcpx_exec and returns its result.
func ExecScript(t *testing.T, ctx context.Context, cs *mcp.ClientSession, code string, extra map[string]any) *mcp.CallToolResult {
	t.Helper()
	args := map[string]any{"code": code}
	for k, v := range extra {
		args[k] = v
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpx_exec", Arguments: args})
	if err != nil {
		t.Fatalf("mcpx_exec: %v", err)
	}
	return res
}

func ScriptText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
