package mcp

import (
	"encoding/json"
	"strings"

	"mcpx/internal/jsonrpc"
)

// Meta returns the _meta object of a params object; an absent or malformed
// _meta gives an empty one.
func Meta(params *jsonrpc.Object) *jsonrpc.Object {
	raw, ok := params.Get("_meta")
	if !ok {
		return &jsonrpc.Object{}
	}
	meta, err := jsonrpc.ParseObject(raw)
	if err != nil {
		return &jsonrpc.Object{}
	}
	return meta
}

// SetMeta sets one _meta key of a params object, leaving the rest as it was.
func SetMeta(params *jsonrpc.Object, key string, value json.RawMessage) {
	meta := Meta(params)
	meta.Set(key, value)
	params.Set("_meta", meta.Bytes())
}

// EditMeta applies edit to the _meta of params. An _meta left empty is
// removed.
func EditMeta(params *jsonrpc.Object, edit func(meta *jsonrpc.Object)) {
	meta := Meta(params)
	edit(meta)
	if meta.Len() == 0 {
		params.Delete("_meta")
		return
	}
	params.Set("_meta", meta.Bytes())
}

// DeleteReserved removes every io.modelcontextprotocol/ key from meta.
func DeleteReserved(meta *jsonrpc.Object) {
	for _, k := range meta.Keys() {
		if strings.HasPrefix(k, MetaReservedPrefix) {
			meta.Delete(k)
		}
	}
}

// MetaString returns a string-valued _meta key.
func MetaString(meta *jsonrpc.Object, key string) (string, bool) {
	raw, ok := meta.Get(key)
	if !ok {
		return "", false
	}
	var s *string // nil for null, which is not a string
	if json.Unmarshal(raw, &s) != nil || s == nil {
		return "", false
	}
	return *s, true
}
