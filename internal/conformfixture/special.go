package conformfixture

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// schema2020 is the input schema of json_schema_2020_12_tool: the JSON
// Schema 2020-12 vocabulary the json-schema-2020-12 scenario expects to
// survive ($schema, $defs with an $anchor, $ref, allOf/anyOf,
// if/then/else, additionalProperties).
const schema2020 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {"address": {"$anchor": "addressDef", "type": "object",
    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"},
    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
    "phone": {"type": "string"},
    "email": {"type": "string"}
  },
  "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
  "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
  "then": {"required": ["phone"]},
  "else": {"required": ["email"]},
  "additionalProperties": false
}`

// addSpecialTools adds the tools of the transport and 2026-07-28
// scenarios: reconnection (SSE polling), JSON Schema 2020-12, x-mcp-header,
// and the diagnostic tools of server-stateless.
func (f *Fixture) addSpecialTools() {
	f.tool("test_reconnection", "Closes its SSE stream mid-call; the result arrives after the client reconnects", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if extra := req.Extra; extra != nil && extra.CloseSSEStream != nil {
				extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 500 * time.Millisecond})
				if err := sleep(ctx, 100*time.Millisecond); err != nil {
					return nil, err
				}
			}
			return text("Reconnection test completed successfully"), nil
		})
	f.tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", json.RawMessage(schema2020),
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil })
	f.tool("test_custom_headers", "Mirrors its region argument into the Mcp-Param-Region header (x-mcp-header)", map[string]any{
		"type": "object",
		"properties": map[string]any{
			"region": map[string]any{"type": "string", "description": "Region, mirrored as a header", "x-mcp-header": "Region"},
			"query":  map[string]any{"type": "string", "description": "Not mirrored"},
		},
		"required": []string{"region"},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("Custom headers test completed"), nil
	})
	f.tool("test_missing_capability", "Needs the client's sampling capability: refused with -32021 without it", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if c := req.ClientCapabilities(); c == nil || c.Sampling == nil {
				return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "this tool needs the client's sampling capability",
					Data: json.RawMessage(`{"requiredCapabilities":{"sampling":{}}}`)}
			}
			return text("The client declared sampling"), nil
		})
	f.tool("test_streaming_elicitation", "Asks for input: input_required at 2026-07-28, elicitation/create before", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p := req.Params
			if len(p.InputResponses) > 0 {
				return text("Streaming elicitation completed"), nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{
				Message:         "Please confirm",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}},
			}}}, nil
		})
	f.tool("test_logging_tool", "Logs one message at info (only where the client asked for logs)", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "conformance-fixture", Data: "test_logging_tool ran"}); err != nil {
				return nil, fmt.Errorf("sending log message: %w", err)
			}
			return text("Logging tool executed"), nil
		})
	var toggle sync.Mutex
	toolOn, promptOn := false, false
	f.tool("test_trigger_tool_change", "Adds or removes the tool test_dynamic_tool (the tool list changes)", noArgs,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			toggle.Lock()
			defer toggle.Unlock()
			if toolOn {
				f.srv.RemoveTools("test_dynamic_tool")
			} else {
				f.tool("test_dynamic_tool", "Appears and disappears with test_trigger_tool_change", noArgs,
					func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("dynamic"), nil })
			}
			toolOn = !toolOn
			return text("Tool list changed"), nil
		})
	f.tool("test_trigger_prompt_change", "Adds or removes the prompt test_dynamic_prompt (the prompt list changes)", noArgs,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			toggle.Lock()
			defer toggle.Unlock()
			if promptOn {
				f.srv.RemovePrompts("test_dynamic_prompt")
			} else {
				f.srv.AddPrompt(&mcp.Prompt{Name: "test_dynamic_prompt", Description: "Appears and disappears with test_trigger_prompt_change"},
					func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
						return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "dynamic"}}}}, nil
					})
			}
			promptOn = !promptOn
			return text("Prompt list changed"), nil
		})
}
