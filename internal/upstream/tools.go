package upstream

import (
	"context"
	"encoding/json"
	"fmt"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// Tool is one upstream tool: the fields mcpx reads, and the definition as
// the upstream wrote it.
type Tool struct {
	Name        string
	Title       string
	Description string
	Raw         json.RawMessage
}

// maxToolPages bounds tools/list pagination against an upstream whose
// cursors never end.
const maxToolPages = 100

// Tools returns the upstream's tools, listing them on first use.
func (s *Session) Tools(ctx context.Context) ([]Tool, error) {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	if s.tools != nil {
		return s.tools, nil
	}
	tools, err := s.listTools(ctx)
	if err != nil {
		return nil, err
	}
	s.tools = tools
	return tools, nil
}

func (s *Session) listTools(ctx context.Context) ([]Tool, error) {
	tools := []Tool{}
	seen := map[string]bool{}
	cursor := ""
	for page := 0; page < maxToolPages; page++ {
		params := &jsonrpc.Object{}
		if cursor != "" {
			params.Set("cursor", jsonrpc.MustMarshal(cursor))
		}
		raw, err := s.Call(ctx, mcp.MethodToolsList, params)
		if err != nil {
			return nil, fmt.Errorf("listing tools of %q: %w", s.Server, err)
		}
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("reading tools of %q: %w", s.Server, err)
		}
		for _, r := range res.Tools {
			var t mcp.Tool
			if err := json.Unmarshal(r, &t); err != nil || t.Name == "" {
				continue // a definition mcpx cannot name is one it cannot route
			}
			tools = append(tools, Tool{Name: t.Name, Title: t.Title, Description: t.Description, Raw: r})
		}
		if res.NextCursor == "" || seen[res.NextCursor] {
			break
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
	if f, ok := s.t.(toolFilter); ok {
		tools = f.filterTools(tools)
	}
	return tools, nil
}

// toolFilter is a transport that rejects some tool definitions: 2026-07-28
// HTTP drops tools whose x-mcp-header annotations are invalid.
type toolFilter interface {
	filterTools([]Tool) []Tool
}
