package conformfixture

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// modern reports whether a call came at 2026-07-28 or later, where a
// server asks its client with input_required rather than requests.
func modern(req *mcp.CallToolRequest) bool { return req.ProtocolVersion() >= "2026-07-28" }

// elicitText is the text the elicitation tools answer with: the action
// and the content the client returned.
func elicitText(prefix string, res *mcp.ElicitResult) string {
	content, _ := json.Marshal(res.Content)
	if res.Content == nil {
		content = []byte("{}")
	}
	return fmt.Sprintf("%saction=%s, content=%s", prefix, res.Action, content)
}

func (f *Fixture) elicitTool(name, desc string, schema any, params func(*mcp.CallToolRequest) *mcp.ElicitParams, prefix string) {
	f.tool(name, desc, schema, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if modern(req) {
			// 2026-07-28 has no server-to-client requests: ask with
			// input_required, answer the retry.
			if res, ok := req.Params.InputResponses["elicitation"].(*mcp.ElicitResult); ok {
				return text(elicitText(prefix, res)), nil
			}
			return need(mcp.InputRequestMap{"elicitation": params(req)}, ""), nil
		}
		res, err := req.Session.Elicit(ctx, params(req))
		if err != nil {
			return nil, fmt.Errorf("elicitation: %w", err)
		}
		return text(elicitText(prefix, res)), nil
	})
}

// addElicitationTools adds the tools of tools-call-elicitation,
// elicitation-sep1034-defaults and elicitation-sep1330-enums.
func (f *Fixture) addElicitationTools() {
	f.elicitTool("test_elicitation", "Asks the user for a username and an email", stringArgs("message"), func(req *mcp.CallToolRequest) *mcp.ElicitParams {
		return &mcp.ElicitParams{Message: args(req)["message"], RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"username": map[string]any{"type": "string", "description": "User's response"},
				"email":    map[string]any{"type": "string", "description": "User's email address"},
			},
			"required": []string{"username", "email"},
		}}
	}, "User response: ")
	f.elicitTool("test_elicitation_sep1034_defaults", "Elicits with a default for every primitive type", noArgs, func(*mcp.CallToolRequest) *mcp.ElicitParams {
		return &mcp.ElicitParams{Message: "Please review and update the form fields with defaults", RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
				"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
				"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
				"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
				"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
			},
		}}
	}, "Elicitation completed: ")
	f.elicitTool("test_elicitation_sep1330_enums", "Elicits with the five enum variants", noArgs, func(*mcp.CallToolRequest) *mcp.ElicitParams {
		titled := func(pairs ...string) []map[string]any {
			var out []map[string]any
			for i := 0; i+1 < len(pairs); i += 2 {
				out = append(out, map[string]any{"const": pairs[i], "title": pairs[i+1]})
			}
			return out
		}
		return &mcp.ElicitParams{Message: "Please select options from the enum fields", RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"untitledSingle": map[string]any{"type": "string", "description": "Select one option", "enum": []string{"option1", "option2", "option3"}},
				"titledSingle": map[string]any{"type": "string", "description": "Select one option with titles",
					"oneOf": titled("value1", "First Option", "value2", "Second Option", "value3", "Third Option")},
				"legacyEnum": map[string]any{"type": "string", "description": "Select one option (legacy)",
					"enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
				"untitledMulti": map[string]any{"type": "array", "description": "Select multiple options",
					"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
				"titledMulti": map[string]any{"type": "array", "description": "Select multiple options with titles",
					"items": map[string]any{"anyOf": titled("value1", "First Choice", "value2", "Second Choice", "value3", "Third Choice")}},
			},
		}}
	}, "Elicitation completed: ")
}
