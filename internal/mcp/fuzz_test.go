package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"mcpx/internal/jsonrpc"
)

// FuzzMeta: whatever params a host or an upstream sends, the _meta
// functions keep params one valid JSON object; SetMeta sets exactly its
// key, DeleteReserved removes exactly the io.modelcontextprotocol/ keys,
// MetaString agrees with encoding/json, and every other member, of params
// and of _meta, stays byte for byte.
func FuzzMeta(f *testing.F) {
	for _, s := range []struct{ params, key, value string }{
		{`{}`, MetaProgressToken, `"t"`},
		{`{"name":"x","_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, MetaProtocolVersion, `"2025-11-25"`},
		{`{"_meta":null}`, "x", `{}`},
		{`{"_meta":[1,2]}`, MetaClientInfo, `{"name":"a"}`},
		{`{"_meta":{"a":1},"_meta":{"io.modelcontextprotocol/x":2}}`, "a", `2`},
		{`{"_meta":{"io.modelcontextprotocol/a":1,"io.modelcontextprotocol/a":2,"b":"\u00e9"}}`, "io.modelcontextprotocol/b", `null`},
		{` { "_meta" : { "k" : [ 1 , { } ] } } `, "k\"\\", `"v"`},
	} {
		f.Add([]byte(s.params), s.key, []byte(s.value))
	}
	f.Fuzz(func(t *testing.T, params []byte, key string, value []byte) {
		if !json.Valid(params) { // as everything out of jsonrpc.Decode is
			return
		}
		obj, err := jsonrpc.ParseObject(params)
		if err != nil {
			return
		}
		if !utf8.ValidString(key) { // keys come from mcpx's own code
			return
		}
		if !json.Valid(value) {
			value = []byte(`"v"`)
		}
		// Whitespace around a value is not kept: a value is what it
		// encodes, and mcpx's own code passes them compact.
		value = bytes.TrimSpace(value)
		others := members(obj, "_meta")
		meta := Meta(obj)
		checkValid(t, "Meta", meta.Bytes())
		for _, k := range meta.Keys() {
			raw, _ := meta.Get(k)
			s, ok := MetaString(meta, k)
			var want *string
			wantOK := json.Unmarshal(raw, &want) == nil && want != nil
			if ok != wantOK || ok && s != *want {
				t.Fatalf("MetaString(%q) of %s = %q, %v; encoding/json says %v", k, raw, s, ok, wantOK)
			}
		}
		metaBefore := members(meta, "")

		SetMeta(obj, key, value)
		checkValid(t, "SetMeta", obj.Bytes())
		if got, ok := Meta(obj).Get(key); !ok || !bytes.Equal(got, value) {
			t.Fatalf("after SetMeta(%q, %s): _meta[%q] = %s, %v", key, value, key, got, ok)
		}
		sameMembers(t, "SetMeta: params", others, members(obj, "_meta"))
		metaAfter := members(Meta(obj), key)
		for k, v := range metaBefore {
			if k != key && !bytes.Equal(metaAfter[k], v) {
				t.Fatalf("SetMeta(%q) changed _meta[%q]: %s -> %s", key, k, v, metaAfter[k])
			}
		}

		// Through bytes and back, as the message goes out and comes in.
		again, err := jsonrpc.ParseObject(obj.Bytes())
		if err != nil {
			t.Fatalf("params after SetMeta do not parse: %v: %s", err, obj.Bytes())
		}
		if got, ok := Meta(again).Get(key); !ok || !bytes.Equal(got, value) {
			t.Fatalf("reparsed: _meta[%q] = %s, %v, want %s", key, got, ok, value)
		}

		kept := members(Meta(again), "")
		EditMeta(again, DeleteReserved)
		checkValid(t, "EditMeta", again.Bytes())
		after := Meta(again)
		for _, k := range after.Keys() {
			if strings.HasPrefix(k, MetaReservedPrefix) {
				t.Fatalf("DeleteReserved left %q: %s", k, again.Bytes())
			}
		}
		for k, v := range kept {
			if strings.HasPrefix(k, MetaReservedPrefix) {
				continue
			}
			if got, ok := after.Get(k); !ok || !bytes.Equal(got, v) {
				t.Fatalf("DeleteReserved changed _meta[%q]: %s -> %s", k, v, got)
			}
		}
		if _, ok := again.Get("_meta"); ok && after.Len() == 0 {
			t.Fatalf("an empty _meta was kept: %s", again.Bytes())
		}
		sameMembers(t, "EditMeta: params", others, members(again, "_meta"))
	})
}

// members returns o's members (the last of duplicates) except skip.
func members(o *jsonrpc.Object, skip string) map[string][]byte {
	out := map[string][]byte{}
	for _, k := range o.Keys() {
		if k != skip {
			v, _ := o.Get(k)
			out[k] = append([]byte(nil), v...)
		}
	}
	return out
}

func sameMembers(t *testing.T, what string, want, got map[string][]byte) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: members %d, want %d", what, len(got), len(want))
	}
	for k, v := range want {
		if !bytes.Equal(got[k], v) {
			t.Fatalf("%s: member %q changed: %s -> %s", what, k, v, got[k])
		}
	}
}

func checkValid(t *testing.T, what string, b []byte) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: not a JSON object: %v: %s", what, err, b)
	}
}
