package harness

import (
	"encoding/json"
	"testing"

	"mcpx/internal/mcpxtest"
)

// ListAll pages through a list with mcpx's cursors and returns the named
// string member of every item.
func ListAll(t *testing.T, h *mcpxtest.Host, method, field, member string, meta map[string]any) []string {
	t.Helper()
	var out []string
	cursor := ""
	for page := 0; page < 20; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		if meta != nil {
			params["_meta"] = meta
		}
		res := h.Result(h.Request(method, params), WaitLong)
		var got struct {
			NextCursor string                       `json:"nextCursor"`
			Items      map[string][]json.RawMessage `json:"-"`
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(res, &raw); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(raw["nextCursor"], &got.NextCursor)
		var items []map[string]any
		if err := json.Unmarshal(raw[field], &items); err != nil {
			t.Fatalf("%s result has no %s array: %s", method, field, res)
		}
		for _, it := range items {
			s, _ := it[member].(string)
			out = append(out, s)
		}
		if got.NextCursor == "" {
			return out
		}
		cursor = got.NextCursor
	}
	t.Fatalf("%s never ended", method)
	return nil
}
