package surface

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// hugeQuery is a search query far past the catalog's bounds: unbounded,
// it cost the daemon seconds of CPU for every tool it scored.
var hugeQuery = strings.Repeat("ab ", 200_000)

// TestSearchBoundedMCP: mcpx_search refuses a query past the catalog's
// bounds with a tool error naming the bound, and a normal search after it
// still answers.
func TestSearchBoundedMCP(t *testing.T) {
	t.Parallel()
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		cs := harness.ConnectGoSDK(t, e, mode, cfg, "2025-06-18", harness.NewProgressLog())
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpx_search", Arguments: map[string]any{"query": hugeQuery}})
		if err != nil {
			t.Fatalf("mcpx_search: %v", err)
		}
		if txt := harness.ScriptText(res); !res.IsError || !strings.Contains(txt, "past the limit of 1024") {
			t.Fatalf("a %d-byte query: isError %v, %q; want a tool error naming the bound", len(hugeQuery), res.IsError, txt)
		}
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpx_search", Arguments: map[string]any{"query": "export"}})
		if err != nil || res.IsError || !strings.Contains(harness.ScriptText(res), "demo__export") {
			t.Fatalf("a search after it: %v %+v", err, res)
		}
	})
}

// TestSearchBoundedV1: /v1/tools?q= past the bounds is a 400 naming the
// bound.
func TestSearchBoundedV1(t *testing.T) {
	t.Parallel()
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	c, _ := harness.StartV1Daemon(t, e, cfg)
	code, body := c.Raw(http.MethodGet, apitype.PathV1Tools+"?q="+url.QueryEscape(strings.Repeat("a ", 100)), nil)
	if code != http.StatusBadRequest || !strings.Contains(body, "past the limit of 32") {
		t.Fatalf("a 100-word query: %d %s; want 400 naming the bound", code, body)
	}
	var tools apitype.Tools
	if code := c.Json(http.MethodGet, apitype.PathV1Tools+"?q=export", nil, &tools); code != http.StatusOK || len(tools.Tools) == 0 {
		t.Fatalf("a search after it: %d %+v", code, tools)
	}
}
