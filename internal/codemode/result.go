package codemode

import (
	"context"
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

// Run runs s as Exec does and returns its tool result (ToolResult): what
// a job of the script keeps. It returns an error only when ctx ended
// first: then ctx's cause.
func (e *Engine) Run(ctx context.Context, s Script) (json.RawMessage, error) {
	out, err := e.Exec(ctx, s)
	if err != nil {
		return nil, err
	}
	return ToolResult(out), nil
}
