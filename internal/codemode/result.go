package codemode

import (
	"encoding/json"
	"strings"

	"mcpx/internal/jsonrpc"
)

// ToolResult is a script's outcome as an MCP tool result: the value as
// JSON text, with structuredContent too when it is an object; the console
// output as a second text block; a failure as a tool error (isError) with
// why, and the console.
func ToolResult(o *Outcome) json.RawMessage {
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var r struct {
		Content           []block         `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
		IsError           bool            `json:"isError,omitempty"`
	}
	switch {
	case o.Err != nil:
		r.IsError = true
		r.Content = append(r.Content, block{"text", o.Err.Error()})
	case o.Value == nil:
		r.Content = append(r.Content, block{"text", "(the script returned no value)"})
	default:
		r.Content = append(r.Content, block{"text", string(o.Value)})
		if o.Value[0] == '{' {
			r.StructuredContent = o.Value
		}
	}
	if len(o.Console) > 0 {
		r.Content = append(r.Content, block{"text", "console:\n" + strings.Join(o.Console, "\n")})
	}
	return jsonrpc.MustMarshal(r)
}
