package mcp

import (
	"encoding/json"
	"strings"

	"mcpx/internal/jsonrpc"
)

// Meta returns the _meta object of a params object; an absent or malformed
// _meta gives an empty one. The result is the caller's: editing it does not
// change params.
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
	meta, ok := params.EditObject("_meta")
	if !ok {
		meta = &jsonrpc.Object{}
		params.SetObject("_meta", meta)
	}
	meta.Set(key, value)
}

// EditMeta applies edit to the _meta of params. An _meta left empty is
// removed. The _meta is parsed by the first edit and encoded when params
// is, however many edits there are in between.
func EditMeta(params *jsonrpc.Object, edit func(meta *jsonrpc.Object)) {
	meta, ok := params.EditObject("_meta")
	if !ok {
		meta = &jsonrpc.Object{}
	}
	edit(meta)
	switch {
	case meta.Len() == 0:
		params.Delete("_meta")
	case !ok:
		params.SetObject("_meta", meta)
	}
}

// DeleteReserved removes every io.modelcontextprotocol/ key from meta.
func DeleteReserved(meta *jsonrpc.Object) {
	meta.DeleteFunc(func(k string) bool { return strings.HasPrefix(k, MetaReservedPrefix) })
}

// MetaString returns a string-valued _meta key.
func MetaString(meta *jsonrpc.Object, key string) (string, bool) {
	raw, ok := meta.Get(key)
	if !ok {
		return "", false
	}
	return jsonrpc.Unquote(raw) // null is not a string
}
