package mcp

import (
	"bytes"
	"encoding/json"
	"testing"

	"mcpx/internal/jsonrpc"
)

// reparseEditMeta and reparseSetMeta are what EditMeta and SetMeta did
// before they edited _meta in place: parse _meta, edit it, encode it back,
// on every call. The in-place versions must give the same bytes.
func reparseEditMeta(params *jsonrpc.Object, edit func(meta *jsonrpc.Object)) {
	meta := Meta(params)
	edit(meta)
	if meta.Len() == 0 {
		params.Delete("_meta")
		return
	}
	params.Set("_meta", meta.Bytes())
}

func reparseSetMeta(params *jsonrpc.Object, key string, value json.RawMessage) {
	meta := Meta(params)
	meta.Set(key, value)
	params.Set("_meta", meta.Bytes())
}

// relayEdits are the edits one relayed tools/call makes to its params, in
// order (hostserver, relay, upstream.Session, upstream.Conn), with key and
// value standing in for what a host may have put in _meta.
func relayEdits(params *jsonrpc.Object, key string, value json.RawMessage,
	edit func(*jsonrpc.Object, func(*jsonrpc.Object)), set func(*jsonrpc.Object, string, json.RawMessage)) {
	edit(params, func(m *jsonrpc.Object) { m.Delete("mcpx/idleTimeoutMs"); m.Delete("mcpx/maxTimeoutMs") })
	params.Set("name", jsonrpc.Quote("tool"))
	edit(params, func(m *jsonrpc.Object) { m.Delete(MetaProgressToken) })
	edit(params, func(m *jsonrpc.Object) {
		DeleteReserved(m)
		m.Set(MetaProtocolVersion, jsonrpc.Quote(Version20260728))
		m.Set(key, value)
	})
	set(params, MetaProgressToken, jsonrpc.Quote("mcpx-1"))
}

// FuzzEditMetaInPlace: editing _meta in place gives, byte for byte, what
// parsing and encoding it at every edit gave.
func FuzzEditMetaInPlace(f *testing.F) {
	for _, s := range []struct{ params, key, value string }{
		{`{"name":"x","arguments":{"n":1}}`, "k", `1`},
		{`{"name":"x","_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, "a", `"b"`},
		{`{"_meta":null}`, "x", `{}`},
		{`{"_meta":[1,2],"b":1}`, "x", `[]`},
		{`{"_meta":{"a":1},"x":2,"_meta":{"mcpx/idleTimeoutMs":5, "b" : [1, 2]}}`, "a", `2`},
		{` { "_meta" : { "progressToken" : "t" } , "z":null } `, "progressToken", `"v"`},
	} {
		f.Add([]byte(s.params), s.key, []byte(s.value))
	}
	f.Fuzz(func(t *testing.T, params []byte, key string, value []byte) {
		if !json.Valid(params) || !json.Valid(value) {
			return
		}
		value = bytes.TrimSpace(value)
		a, err := jsonrpc.ParseObject(params)
		if err != nil {
			return
		}
		b, _ := jsonrpc.ParseObject(params)
		relayEdits(a, key, value, EditMeta, SetMeta)
		relayEdits(b, key, value, reparseEditMeta, reparseSetMeta)
		if got, want := a.Bytes(), b.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("in place: %s\nreparsed: %s\ninput %s", got, want, params)
		}
		// And one edit alone, on fresh objects.
		a, _ = jsonrpc.ParseObject(params)
		b, _ = jsonrpc.ParseObject(params)
		EditMeta(a, DeleteReserved)
		reparseEditMeta(b, DeleteReserved)
		if got, want := a.Bytes(), b.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("DeleteReserved in place: %s\nreparsed: %s\ninput %s", got, want, params)
		}
		a, _ = jsonrpc.ParseObject(params)
		b, _ = jsonrpc.ParseObject(params)
		SetMeta(a, key, value)
		reparseSetMeta(b, key, value)
		if got, want := a.Bytes(), b.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("SetMeta in place: %s\nreparsed: %s\ninput %s", got, want, params)
		}
	})
}
