package conformfixture

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// noArgs is the input schema of a tool without arguments.
var noArgs = map[string]any{"type": "object", "properties": map[string]any{}}

// stringArgs is an input schema with required string arguments.
func stringArgs(names ...string) map[string]any {
	props := map[string]any{}
	for _, n := range names {
		props[n] = map[string]any{"type": "string"}
	}
	return map[string]any{"type": "object", "properties": props, "required": names}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// args decodes a call's arguments into a map of strings (the fixture's
// arguments are strings).
func args(req *mcp.CallToolRequest) map[string]string {
	out := map[string]string{}
	var raw map[string]any
	_ = json.Unmarshal(req.Params.Arguments, &raw)
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// sleep waits d unless ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (f *Fixture) tool(name, desc string, schema any, h mcp.ToolHandler) {
	f.srv.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: schema}, h)
}

// addTools adds the tools of the tools-call-* scenarios.
func (f *Fixture) addTools() {
	f.tool("test_simple_text", "Returns simple text content", noArgs, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("This is a simple text response for testing."), nil
	})
	f.tool("test_image_content", "Returns image content", noArgs, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"}}}, nil
	})
	f.tool("test_audio_content", "Returns audio content", noArgs, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: silentWAV, MIMEType: "audio/wav"}}}, nil
	})
	f.tool("test_embedded_resource", "Returns an embedded resource", noArgs, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content.",
		}}}}, nil
	})
	f.tool("test_multiple_content_types", "Returns text, image and resource content", noArgs, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "Multiple content types test:"},
			&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`,
			}},
		}}, nil
	})
	f.tool("test_tool_with_logging", "Sends three log messages while it runs", noArgs, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if i > 0 {
				if err := sleep(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "conformance-fixture", Data: msg}); err != nil {
				return nil, fmt.Errorf("sending log message %q: %w", msg, err)
			}
		}
		return text("Tool with logging executed successfully"), nil
	})
	f.tool("test_error_handling", "Always fails", noArgs, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text("This tool intentionally returns an error for testing")
		r.IsError = true
		return r, nil
	})
	f.tool("test_tool_with_progress", "Reports progress 0, 50, 100 of 100", noArgs, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tok := req.Params.GetProgressToken()
		for i, p := range []float64{0, 50, 100} {
			if i > 0 {
				if err := sleep(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			if tok == nil {
				continue
			}
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: p, Total: 100}); err != nil {
				return nil, fmt.Errorf("sending progress: %w", err)
			}
		}
		return text("Tool with progress executed successfully"), nil
	})
	f.tool("test_sampling", "Asks the client's LLM", stringArgs("prompt"), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ask := askSampling(args(req)["prompt"], 100)
		if modern(req) {
			// 2026-07-28: input_required, then the retry's answer.
			if reply, ok := sampled(req.Params.InputResponses["sampling"]); ok {
				return text("LLM response: " + reply), nil
			}
			return need(mcp.InputRequestMap{"sampling": ask}, ""), nil
		}
		res, err := req.Session.CreateMessage(ctx, ask)
		if err != nil {
			return nil, fmt.Errorf("sampling: %w", err)
		}
		reply, _ := sampled(res)
		return text("LLM response: " + reply), nil
	})
	f.addElicitationTools()
	f.addSpecialTools()
}
