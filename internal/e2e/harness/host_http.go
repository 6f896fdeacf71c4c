package harness

import (
	"encoding/json"
)

// ModernDiscover is a valid 2026-07-28 server/discover body.
var ModernDiscover = JsonText(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": map[string]any{"_meta": ModernMeta(nil)}})

func JsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
