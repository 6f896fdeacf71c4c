package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

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

	// params holds the x-mcp-header annotations of a listed tool, read on
	// first use and shared by the copies of the Tool; nil for a Tool not
	// made by a listing.
	params *lazyParams
}

type lazyParams struct {
	once sync.Once
	p    *ParamHeaders
}

// ParamHeaders returns the x-mcp-header annotations of the tool's
// inputSchema: read once per listing, so that a call's Mcp-Param-* headers
// can be checked without parsing the schema again.
func (t *Tool) ParamHeaders() *ParamHeaders {
	if t.params == nil {
		return readParamHeaders(t.Raw)
	}
	t.params.once.Do(func() { t.params.p = readParamHeaders(t.Raw) })
	return t.params.p
}

// readParamHeaders reads the annotations of a tool definition; one without
// an inputSchema has none.
func readParamHeaders(def json.RawMessage) *ParamHeaders {
	var schema json.RawMessage
	if obj, err := jsonrpc.ParseObject(def); err == nil {
		schema, _ = obj.Get("inputSchema")
	}
	return ReadParamHeaders(schema)
}

// maxToolPages bounds tools/list pagination against an upstream whose
// cursors never end.
const maxToolPages = 100

// listWait bounds one listing of an upstream's tools.
const listWait = 30 * time.Second

// toolsFetch is one listing in progress, shared by every caller.
type toolsFetch struct {
	done  chan struct{}
	tools []Tool
	err   error
}

// Tools returns the upstream's tools, listing them on first use. Callers
// share one listing, which runs under its own deadline in a goroutine of
// the pool's; ctx only bounds how long this caller waits for it, so a host
// that gives up leaves, and no caller waits behind a lock.
func (s *Session) Tools(ctx context.Context) ([]Tool, error) {
	s.toolsMu.Lock()
	if s.tools != nil {
		tools := s.tools
		s.toolsMu.Unlock()
		return tools, nil
	}
	f := s.fetch
	if f == nil {
		f = &toolsFetch{done: make(chan struct{})}
		s.fetch = f
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			lctx, cancel := context.WithTimeoutCause(context.Background(), listWait,
				fmt.Errorf("upstream %q did not list its tools within %s", s.Server, listWait))
			defer cancel()
			f.tools, f.err = s.listTools(lctx)
			s.toolsMu.Lock()
			if f.err == nil {
				s.tools = f.tools
			}
			s.fetch = nil // a failed listing is tried again by the next caller
			s.toolsMu.Unlock()
			close(f.done)
		}()
	}
	s.toolsMu.Unlock()
	select {
	case <-f.done:
		return f.tools, f.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
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
			tools = append(tools, Tool{Name: t.Name, Title: t.Title, Description: t.Description, Raw: r, params: &lazyParams{}})
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

// cachedTools returns the tools already listed, or nil.
func (s *Session) cachedTools() []Tool {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	return s.tools
}
