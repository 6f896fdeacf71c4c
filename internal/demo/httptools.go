package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// httpToolDefs are the definitions of the tools listed only over HTTP, where
// x-mcp-header means something (2026-07-28 streamable-http.mdx, "Custom
// Headers from Tool Parameters"). region_echo's annotation is valid: a 2026
// client must mirror its region argument as Mcp-Param-Region.
// bad_header_tool's is not (x-mcp-header on a number): an HTTP client must
// drop the tool from its tools/list. Built on first use, as toolDefs are.
var httpToolDefs = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"region_echo": compact(`{"name": "region_echo", "title": "Region echo",
		"description": "Returns its region argument and the Mcp-Param-Region header it arrived with (decoded): a 2026-07-28 HTTP client must mirror region there.",
		"inputSchema": {"type": "object", "properties": {
			"region": {"type": "string", "x-mcp-header": "Region", "description": "a region, mirrored as the Mcp-Param-Region header"},
			"text": {"type": "string", "description": "anything; not mirrored"}},
			"required": ["region"]},
		"annotations": {"readOnlyHint": true}}`),
		"bad_header_tool": compact(`{"name": "bad_header_tool", "title": "Invalid x-mcp-header",
		"description": "Its x-mcp-header annotation is on a number, which is invalid: an HTTP client must drop this tool from its list.",
		"inputSchema": {"type": "object", "properties": {
			"amount": {"type": "number", "x-mcp-header": "Amount", "description": "a number: x-mcp-header is not allowed here"}}}}`),
	}
})

// httpTools are the tools served over HTTP: every stdio tool, then the ones
// above.
var httpTools = sync.OnceValue(func() []tool {
	return append(slices.Clip(tools), tool{"region_echo", runRegionEcho}, tool{"bad_header_tool", runBadHeaderTool})
})

// toolDef returns the definition of tool name.
func toolDef(name string) string {
	if d, ok := toolDefs()[name]; ok {
		return d
	}
	return httpToolDefs()[name]
}

// headerParamsOf returns the valid x-mcp-header annotations of every HTTP
// tool that has some; a tool whose annotations are invalid is absent.
var headerParamsOf = sync.OnceValue(func() map[string][]headerParam {
	out := map[string][]headerParam{}
	for _, t := range httpTools() {
		params, err := headerParams(toolDef(t.name))
		if err == nil && len(params) > 0 {
			out[t.name] = params
		}
	}
	return out
})

type regionArgs struct {
	Region string `json:"region"`
	Text   string `json:"text"`
}

func (a *regionArgs) check() error {
	if a.Region == "" {
		return errors.New("region is required")
	}
	return nil
}

// runRegionEcho returns its region and the Mcp-Param-Region header it came
// with, decoded (null without one, e.g. over a legacy session).
func runRegionEcho(_ context.Context, t *toolCall) (json.RawMessage, error) {
	var a regionArgs
	if err := t.decode(&a); err != nil {
		return errorResult("region_echo: invalid arguments: %v", err), nil
	}
	var header *string
	if v, ok := t.c.hdr["Mcp-Param-Region"]; ok {
		header = &v
	}
	text := fmt.Sprintf("region %q; no Mcp-Param-Region header", a.Region)
	if header != nil {
		text = fmt.Sprintf("region %q; Mcp-Param-Region header %q", a.Region, *header)
	}
	return toolResult(text, marshal(struct {
		Region string  `json:"region"`
		Header *string `json:"header"`
	}{a.Region, header}), false), nil
}

// runBadHeaderTool runs, although a conforming HTTP client never lists it.
func runBadHeaderTool(_ context.Context, t *toolCall) (json.RawMessage, error) {
	names := slices.Sorted(maps.Keys(t.c.hdr))
	return textResult("bad_header_tool ran: an HTTP client should have dropped it (x-mcp-header on a number); headers: " +
		strings.Join(names, ", ")), nil
}
