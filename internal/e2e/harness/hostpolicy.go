package harness

import (
	"encoding/json"
	"strings"
	"testing"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// PolicyFace is one way a host reaches mcpx: a stream (stdio) or HTTP,
// legacy (an initialized connection or session) or 2026-07-28 (each
// request names its host in _meta).
type PolicyFace struct {
	Name   string
	Modern bool
	Send   func(method string, params map[string]any) *jsonrpc.Message
}

// Call sends one request and returns its answer.
func (f PolicyFace) Call(t *testing.T, method string, params map[string]any) *jsonrpc.Message {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	return f.Send(method, params)
}

// PolicyMeta is the _meta of a 2026-07-28 request of the host client,
// taking the tasks extension.
func PolicyMeta(client string) map[string]any {
	return mcpxtest.ModernMeta(map[string]any{
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": client, "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
	})
}

// HttpFace sends r's requests: legacy ones in its session, or 2026-07-28
// ones, with their headers, as the host client.
func HttpFace(t *testing.T, r *RawHost, name string, modern bool, client string) PolicyFace {
	return PolicyFace{Name: name, Modern: modern, Send: func(method string, params map[string]any) *jsonrpc.Message {
		t.Helper()
		hdr := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
		if modern {
			params["_meta"] = PolicyMeta(client)
			named := ""
			for _, k := range []string{"name", "uri", "taskId"} {
				if s, ok := params[k].(string); ok && method != "completion/complete" {
					named = s
				}
			}
			hdr = ModernHeaders(method, named)
		}
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		if err != nil {
			t.Fatal(err)
		}
		rep := r.Do(string(b), hdr)
		if len(rep.Msgs) == 0 {
			t.Fatalf("%s %s: %d %s, no message", name, method, rep.Status, rep.Body)
		}
		return rep.Msgs[len(rep.Msgs)-1]
	}}
}

// ToolText calls a tool and returns its result's first text and whether
// it is an error.
func (f PolicyFace) ToolText(t *testing.T, tool string, args map[string]any) (string, bool) {
	t.Helper()
	m := f.Call(t, "tools/call", map[string]any{"name": tool, "arguments": args})
	if m.Error != nil {
		t.Fatalf("%s: %s: %s", f.Name, tool, m.Encode())
	}
	return FirstText(t, m.Result), strings.Contains(string(m.Result), `"isError":true`)
}

// Background starts tool as a job through mcpx_call and returns its id.
func (f PolicyFace) Background(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	m := f.Call(t, "tools/call", map[string]any{"name": "mcpx_call", "arguments": map[string]any{"background": true, "name": tool, "arguments": args}})
	if m.Error != nil {
		t.Fatalf("%s: background %s: %s", f.Name, tool, m.Encode())
	}
	return JobOf(t, m.Result).JobID
}
