package harness

import (
	"encoding/json"
	"testing"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// RelayWait bounds every wait of these tests.
const RelayWait = 30 * time.Second

// DemoToolNames are the demo server's tools, in its tools/list order.
// TestToolsListPagination checks this list against what mcpx shows.
var DemoToolNames = []string{"export", "scan", "stubborn", "wait", "cancellations", "echo", "burst", "raw", "crash", "garbage", "fail", "sleep_then", "ask", "gated", "ask_later"}

// listTools sends tools/list (with params) and returns the result's tools,
// each as the exact bytes mcpx sent, by name.
func ListToolDefs(t *testing.T, h *mcpxtest.Host, params any) (names []string, defs map[string]json.RawMessage) {
	t.Helper()
	res := h.Result(h.Request("tools/list", params), RelayWait)
	var list struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor *string           `json:"nextCursor"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		t.Fatalf("tools/list result %s: %v", res, err)
	}
	if list.NextCursor != nil {
		t.Errorf("mcpx paginated its tools/list (nextCursor %q); the test reads one page", *list.NextCursor)
	}
	defs = map[string]json.RawMessage{}
	for _, raw := range list.Tools {
		var tool struct{ Name string }
		if err := json.Unmarshal(raw, &tool); err != nil || tool.Name == "" {
			t.Fatalf("tool definition without a name: %s", raw)
		}
		if _, dup := defs[tool.Name]; dup {
			t.Errorf("tools/list names %q twice", tool.Name)
		}
		names = append(names, tool.Name)
		defs[tool.Name] = raw
	}
	return names, defs
}

// member returns the raw bytes of key in the JSON object raw.
func RawMember(t *testing.T, raw json.RawMessage, key string) json.RawMessage {
	t.Helper()
	obj, err := jsonrpc.ParseObject(raw)
	if err != nil {
		t.Fatalf("not an object: %s", raw)
	}
	v, ok := obj.Get(key)
	if !ok {
		t.Fatalf("no %q in %s", key, raw)
	}
	return v
}

// FirstText returns the text of a tool result's first content block.
func FirstText(t *testing.T, res json.RawMessage) string {
	t.Helper()
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 || r.Content[0].Type != "text" {
		t.Fatalf("not a tool result with text: %s", res)
	}
	return r.Content[0].Text
}

// EchoArgs are arguments a lossy relay would alter: a 20-digit integer,
// 1.0e+2, -0.0, unicode escapes (with a surrogate pair and U+2028), escaped
// quotes and slashes, spaces inside values, and an unknown nested structure.
const EchoArgs = `{"n":12345678901234567890,"f":1.0e+2,"z":-0.0,"s":"caf\u00e9 \u2028 \ud83d\ude00 \"q\" \\ \/ <&>","x-unknown":{"deep":[1,{"z":null,"t":true,"e":[]}],"w": [ 1 , 2.50 ]}}`
