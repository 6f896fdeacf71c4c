package jsonrpc

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustParse(t *testing.T, in string) *Object {
	t.Helper()
	o, err := ParseObject([]byte(in))
	if err != nil {
		t.Fatalf("ParseObject(%s): %v", in, err)
	}
	return o
}

func TestParseObject(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		keys  []string
		bytes string // Bytes() of the untouched object
	}{
		{"empty input", ``, []string{}, `{}`},
		{"null", `null`, []string{}, `{}`},
		{"whitespace then null", " \n null", []string{}, `{}`},
		{"empty object", ` { } `, []string{}, `{}`},
		{"one member", `{"a":1}`, []string{"a"}, `{"a":1}`},
		{
			"whitespace between members dropped, inside values kept",
			"{ \"a\" : [1, 2] ,\n\t\"b\":{ \"c\" : null } }",
			[]string{"a", "b"},
			`{"a":[1, 2],"b":{ "c" : null }}`,
		},
		{
			"strings with braces, quotes and escapes",
			`{"s":"}{][\",\\","t":"\u007d\\\"","u":["]",{"k":"}"}]}`,
			[]string{"s", "t", "u"},
			`{"s":"}{][\",\\","t":"\u007d\\\"","u":["]",{"k":"}"}]}`,
		},
		{
			"escaped key kept as written",
			`{"a\u0062":true,"\"q\"":false}`,
			[]string{"ab", `"q"`},
			`{"a\u0062":true,"\"q\"":false}`,
		},
		{
			"numbers and literals as written",
			`{"n":-1.50e+10,"big":123456789012345678901234567890,"t":true,"f":false,"z":null}`,
			[]string{"n", "big", "t", "f", "z"},
			`{"n":-1.50e+10,"big":123456789012345678901234567890,"t":true,"f":false,"z":null}`,
		},
		{
			"duplicate keys kept",
			`{"a":1,"b":2,"a":3}`,
			[]string{"a", "b", "a"},
			`{"a":1,"b":2,"a":3}`,
		},
		{
			"deeply nested",
			`{"a":[[[[{"b":[[{}]]}]]]],"c":"x"}`,
			[]string{"a", "c"},
			`{"a":[[[[{"b":[[{}]]}]]]],"c":"x"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustParse(t, tt.in)
			if diff := cmp.Diff(tt.keys, o.Keys()); diff != "" {
				t.Errorf("Keys mismatch (-want +got):\n%s", diff)
			}
			if got := o.Len(); got != len(tt.keys) {
				t.Errorf("Len() = %d, want %d", got, len(tt.keys))
			}
			if got := string(o.Bytes()); got != tt.bytes {
				t.Errorf("Bytes():\ngot  %s\nwant %s", got, tt.bytes)
			}
			if got, want := o.Verbatim([]byte(tt.in)), tt.in == tt.bytes; got != want {
				t.Errorf("Verbatim() = %v, want %v", got, want)
			}
			o.Set("added", json.RawMessage("1"))
			if o.Verbatim([]byte(tt.in)) {
				t.Errorf("Verbatim() after Set = true")
			}
		})
	}
}

func TestParseObjectRejects(t *testing.T) {
	for _, in := range []string{
		`[]`, `"s"`, `1`, `true`, `nul`, `{`, `{"a"`, `{"a":`, `{"a":1`, `{"a" 1}`, `{a:1}`,
		`{"a":1,}`, `{"a":1 "b":2}`, `{"a":1}}`, `{"a":1} x`, `{"a":"unterminated}`, `{"a":[1,2}`,
		`{"a":{"b":1}`, `{,}`, `{"a":,"b":1}`, `{"\x":1}`,
	} {
		t.Run(in, func(t *testing.T) {
			if o, err := ParseObject([]byte(in)); err == nil {
				t.Errorf("ParseObject(%s) = %s, want an error", in, o.Bytes())
			}
		})
	}
}

func TestObjectGet(t *testing.T) {
	o := mustParse(t, `{"a":1,"b":{"x":"}"},"a":"last","e\u0073c":[]}`)
	tests := []struct {
		key  string
		want string
		ok   bool
	}{
		{"a", `"last"`, true},
		{"b", `{"x":"}"}`, true},
		{"esc", `[]`, true},
		{"x", ``, false},
		{"A", ``, false},
	}
	for _, tt := range tests {
		got, ok := o.Get(tt.key)
		if string(got) != tt.want || ok != tt.ok {
			t.Errorf("Get(%q) = %s, %v; want %s, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

func TestObjectEdit(t *testing.T) {
	const in = `{"name":"old","arguments":{"s":"a\"}{b","n":1.50},"_meta":{"progressToken":7}}`
	tests := []struct {
		name string
		in   string
		edit func(o *Object)
		want string
	}{
		{
			name: "set in place",
			in:   in,
			edit: func(o *Object) { o.Set("name", MustMarshal("new")) },
			want: `{"name":"new","arguments":{"s":"a\"}{b","n":1.50},"_meta":{"progressToken":7}}`,
		},
		{
			name: "set appends a new key",
			in:   in,
			edit: func(o *Object) { o.Set("extra", json.RawMessage(`[1,2]`)) },
			want: `{"name":"old","arguments":{"s":"a\"}{b","n":1.50},"_meta":{"progressToken":7},"extra":[1,2]}`,
		},
		{
			name: "set a key needing escapes",
			in:   `{}`,
			edit: func(o *Object) { o.Set("a\"b\n", json.RawMessage(`1`)) },
			want: `{"a\"b\n":1}`,
		},
		{
			name: "set on duplicates keeps the last position and drops the others",
			in:   `{"a":1,"b":2,"a":3,"c":4}`,
			edit: func(o *Object) { o.Set("a", json.RawMessage(`9`)) },
			want: `{"b":2,"a":9,"c":4}`,
		},
		{
			name: "set on an escaped key keeps its spelling",
			in:   `{"n\u0061me":"old"}`,
			edit: func(o *Object) { o.Set("name", MustMarshal("new")) },
			want: `{"n\u0061me":"new"}`,
		},
		{
			name: "delete",
			in:   in,
			edit: func(o *Object) { o.Delete("arguments") },
			want: `{"name":"old","_meta":{"progressToken":7}}`,
		},
		{
			name: "delete removes every duplicate",
			in:   `{"a":1,"b":2,"a":3}`,
			edit: func(o *Object) { o.Delete("a") },
			want: `{"b":2}`,
		},
		{
			name: "delete the last member",
			in:   `{"a":1}`,
			edit: func(o *Object) { o.Delete("a") },
			want: `{}`,
		},
		{
			name: "set on an empty object from null",
			in:   `null`,
			edit: func(o *Object) { o.Set("a", json.RawMessage(`{}`)) },
			want: `{"a":{}}`,
		},
		{
			name: "several edits",
			in:   in,
			edit: func(o *Object) {
				o.Delete("_meta")
				o.Set("name", MustMarshal("x"))
				o.Set("_meta", json.RawMessage(`{"progressToken":"t"}`))
			},
			want: `{"name":"x","arguments":{"s":"a\"}{b","n":1.50},"_meta":{"progressToken":"t"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustParse(t, tt.in)
			tt.edit(o)
			got := o.Bytes()
			if string(got) != tt.want {
				t.Errorf("Bytes():\ngot  %s\nwant %s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("Bytes() is not valid JSON: %s", got)
			}
		})
	}
}

func TestObjectDeleteReports(t *testing.T) {
	o := mustParse(t, `{"a":1,"b":2}`)
	if !o.Delete("a") {
		t.Error("Delete(a) = false, want true")
	}
	if o.Delete("a") {
		t.Error("second Delete(a) = true, want false")
	}
	if o.Delete("zzz") {
		t.Error("Delete(zzz) = true, want false")
	}
	if diff := cmp.Diff([]string{"b"}, o.Keys()); diff != "" {
		t.Errorf("Keys mismatch (-want +got):\n%s", diff)
	}
}

// TestObjectEditLeavesInputAlone checks that editing an object never writes
// into the bytes it was parsed from.
func TestObjectEditLeavesInputAlone(t *testing.T) {
	in := []byte(`{"a":1,"b":2,"a":3,"c":4}`)
	orig := string(in)
	o, err := ParseObject(in)
	if err != nil {
		t.Fatal(err)
	}
	o.Set("a", json.RawMessage(`"xxxxxxxxxxxxxxxx"`))
	o.Delete("b")
	o.Set("d", json.RawMessage(`5`))
	_ = o.Bytes()
	if string(in) != orig {
		t.Errorf("input changed to %s, want %s", in, orig)
	}
}

// TestObjectMeaning checks that the bytes of an edited object mean what the
// same edit means on a decoded map.
func TestObjectMeaning(t *testing.T) {
	in := `{"a":{"x":[1,{"y":"}"}]},"b":"\"","a":2,"c":1e400}`
	o := mustParse(t, in)
	o.Set("b", json.RawMessage(`{"new":true}`))
	o.Delete("c")
	o.Set("d", json.RawMessage(`null`))

	want := jsonValue(t, []byte(in)).(map[string]any)
	want["b"] = map[string]any{"new": true}
	delete(want, "c")
	want["d"] = nil
	if diff := cmp.Diff(want, jsonValue(t, o.Bytes())); diff != "" {
		t.Errorf("edited object mismatch (-want +got):\n%s", diff)
	}
}

// ParseObjectInto must fill an Object as ParseObject returns it, and
// leave it empty on error.
func TestParseObjectInto(t *testing.T) {
	for _, src := range []string{``, `null`, `{}`, ` {"a":1, "b" : [2,{"c":3}], "\u0064":"e"} `, `{"a":1,"b":2,"c":3,"d":4,"e":5}`} {
		want, err := ParseObject([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		var got Object
		got.Set("stale", json.RawMessage(`1`))
		if err := ParseObjectInto(&got, []byte(src)); err != nil {
			t.Fatalf("ParseObjectInto(%q): %v", src, err)
		}
		if string(got.Bytes()) != string(want.Bytes()) || got.Len() != want.Len() {
			t.Errorf("ParseObjectInto(%q) = %s, want %s", src, got.Bytes(), want.Bytes())
		}
		got.Set("x", json.RawMessage(`true`)) // editable as any Object
		want.Set("x", json.RawMessage(`true`))
		if string(got.Bytes()) != string(want.Bytes()) {
			t.Errorf("after Set: %s, want %s", got.Bytes(), want.Bytes())
		}
	}
	for _, src := range []string{`[]`, `{"a"}`, `{"a":1`, `"s"`} {
		var got Object
		got.Set("stale", json.RawMessage(`1`))
		if err := ParseObjectInto(&got, []byte(src)); err == nil || got.Len() != 0 {
			t.Errorf("ParseObjectInto(%q) = %v with %d members, want an error and none", src, err, got.Len())
		}
	}
}
