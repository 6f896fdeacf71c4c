package mcp

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mcpx/internal/jsonrpc"
)

func parse(t *testing.T, in string) *jsonrpc.Object {
	t.Helper()
	o, err := jsonrpc.ParseObject([]byte(in))
	if err != nil {
		t.Fatalf("ParseObject(%s): %v", in, err)
	}
	return o
}

func TestMeta(t *testing.T) {
	tests := []struct {
		name   string
		params string
		want   string // Bytes() of the returned _meta
	}{
		{"absent", `{"name":"x"}`, `{}`},
		{"empty params", `{}`, `{}`},
		{"null", `{"_meta":null}`, `{}`},
		{"a string", `{"_meta":"x"}`, `{}`},
		{"an array", `{"_meta":[1]}`, `{}`},
		{"a number", `{"_meta":1}`, `{}`},
		{"empty object", `{"_meta":{}}`, `{}`},
		{"members kept byte for byte", `{"_meta":{"progressToken":12345678901234567890,"x":{"a": [1.0]}}}`, `{"progressToken":12345678901234567890,"x":{"a": [1.0]}}`},
		{"duplicate _meta: the last wins", `{"_meta":{"a":1},"_meta":{"b":2}}`, `{"b":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(Meta(parse(t, tt.params)).Bytes()); got != tt.want {
				t.Errorf("Meta(%s): got %s, want %s", tt.params, got, tt.want)
			}
		})
	}
}

func TestSetMeta(t *testing.T) {
	tests := []struct {
		name   string
		params string
		key    string
		value  string
		want   string
	}{
		{
			name:   "adds _meta",
			params: `{"name":"x","arguments":{"a":1}}`,
			key:    MetaProgressToken, value: `"t1"`,
			want: `{"name":"x","arguments":{"a":1},"_meta":{"progressToken":"t1"}}`,
		},
		{
			name:   "replaces a key in place, keeps the rest",
			params: `{"_meta":{"a":1.50,"progressToken":7,"z":"}"},"name":"x"}`,
			key:    MetaProgressToken, value: `"t1"`,
			want: `{"_meta":{"a":1.50,"progressToken":"t1","z":"}"},"name":"x"}`,
		},
		{
			name:   "adds a key to an existing _meta",
			params: `{"_meta":{"a":1}}`,
			key:    "b", value: `[true]`,
			want: `{"_meta":{"a":1,"b":[true]}}`,
		},
		{
			name:   "replaces a malformed _meta",
			params: `{"_meta":"junk","name":"x"}`,
			key:    "k", value: `1`,
			want: `{"_meta":{"k":1},"name":"x"}`,
		},
		{
			name:   "replaces a null _meta",
			params: `{"_meta":null}`,
			key:    "k", value: `1`,
			want: `{"_meta":{"k":1}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := parse(t, tt.params)
			SetMeta(params, tt.key, json.RawMessage(tt.value))
			if got := string(params.Bytes()); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestEditMeta(t *testing.T) {
	tests := []struct {
		name   string
		params string
		edit   func(meta *jsonrpc.Object)
		want   string
	}{
		{
			name:   "delete the only key removes _meta",
			params: `{"name":"x","_meta":{"progressToken":1},"arguments":{}}`,
			edit:   func(m *jsonrpc.Object) { m.Delete(MetaProgressToken) },
			want:   `{"name":"x","arguments":{}}`,
		},
		{
			name:   "delete one of two keeps _meta in place",
			params: `{"_meta":{"progressToken":1,"other":"v"},"name":"x"}`,
			edit:   func(m *jsonrpc.Object) { m.Delete(MetaProgressToken) },
			want:   `{"_meta":{"other":"v"},"name":"x"}`,
		},
		{
			name:   "no _meta and nothing added: still none",
			params: `{"name":"x"}`,
			edit:   func(m *jsonrpc.Object) { m.Delete(MetaProgressToken) },
			want:   `{"name":"x"}`,
		},
		{
			name:   "an empty _meta left empty is removed",
			params: `{"name":"x","_meta":{}}`,
			edit:   func(*jsonrpc.Object) {},
			want:   `{"name":"x"}`,
		},
		{
			name:   "a malformed _meta left empty is removed",
			params: `{"_meta":"junk","name":"x"}`,
			edit:   func(*jsonrpc.Object) {},
			want:   `{"name":"x"}`,
		},
		{
			name:   "add to absent _meta",
			params: `{"name":"x"}`,
			edit:   func(m *jsonrpc.Object) { m.Set("a", json.RawMessage(`1`)) },
			want:   `{"name":"x","_meta":{"a":1}}`,
		},
		{
			name:   "untouched members kept byte for byte",
			params: `{"_meta":{"x":{"deep": [1.0, "}{"]},"progressToken":"t"},"n":1e400}`,
			edit:   func(m *jsonrpc.Object) { m.Set(MetaProgressToken, json.RawMessage(`"u"`)) },
			want:   `{"_meta":{"x":{"deep": [1.0, "}{"]},"progressToken":"u"},"n":1e400}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := parse(t, tt.params)
			EditMeta(params, tt.edit)
			if got := string(params.Bytes()); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestDeleteReserved(t *testing.T) {
	meta := parse(t, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":1,`+
		`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol.other/x":1,`+
		`"example.com/io.modelcontextprotocol/y":2,"io.modelcontextprotocol/protocolVersion":"dup"}`)
	DeleteReserved(meta)
	want := []string{"progressToken", "io.modelcontextprotocol.other/x", "example.com/io.modelcontextprotocol/y"}
	if diff := cmp.Diff(want, meta.Keys()); diff != "" {
		t.Errorf("keys after DeleteReserved mismatch (-want +got):\n%s", diff)
	}

	empty := parse(t, `{}`)
	DeleteReserved(empty)
	if empty.Len() != 0 {
		t.Errorf("DeleteReserved on an empty object left %d keys", empty.Len())
	}
}

func TestMetaString(t *testing.T) {
	meta := parse(t, `{"s":"v","esc":"a\"b\u00e9","n":1,"null":null,"obj":{},"empty":""}`)
	tests := []struct {
		key  string
		want string
		ok   bool
	}{
		{"s", "v", true},
		{"esc", "a\"b\u00e9", true},
		{"empty", "", true},
		{"n", "", false},
		{"null", "", false},
		{"obj", "", false},
		{"missing", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, ok := MetaString(meta, tt.key)
			if got != tt.want || ok != tt.ok {
				t.Errorf("MetaString(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// The stamp's keys are among jsonrpc's common names: parsing a _meta that
// has one takes no allocation for its name (one for the Object alone).
func TestMetaKeysParseWithoutCopies(t *testing.T) {
	for _, key := range []string{MetaProtocolVersion, MetaClientInfo, MetaClientCapabilities, MetaLogLevel, MetaServerInfo} {
		data := []byte(`{"` + key + `":1}`)
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := jsonrpc.ParseObject(data); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 1 {
			t.Errorf("parsing %s: %v allocations, want 1", data, allocs)
		}
	}
}

// The stamp's protocol version is a common name too: reading it from a
// request takes no allocation.
func TestStampVersionUnquotesWithoutCopy(t *testing.T) {
	raw := jsonrpc.Quote(Version20260728)
	allocs := testing.AllocsPerRun(100, func() {
		if v, ok := jsonrpc.Unquote(raw); !ok || v != Version20260728 {
			t.Fatalf("Unquote(%s) = %q, %v", raw, v, ok)
		}
	})
	if allocs != 0 {
		t.Errorf("Unquote(%s): %v allocations, want 0", raw, allocs)
	}
}
