package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The fast paths must decode exactly as encoding/json does, or decline:
// these tests and fuzz targets compare them with the slow paths.

// decodeCases are messages for the fast path, and traps it must leave to
// the slow path (case-folded or escaped names, duplicates, null ids,
// invalid JSON anywhere in the message).
var decodeCases = []struct {
	in   string
	fast bool // whether the fast path should take it
}{
	{`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"demo__echo","arguments":{"n":12345},"_meta":{"progressToken":"p-42"}}}`, true},
	{`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"{\"n\":12345}"}],"structuredContent":{"n":12345}}}`, true},
	{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpx-42","progress":17,"total":200,"message":"step 17"}}`, true},
	{` { "id" : "a\"b" , "jsonrpc" : "2.0" , "method" : "x/y" , "params" : [ 1 , -0.5e+3 , true , false , null ] , "extra" : {} } `, true},
	{`{"jsonrpc":"2.0","id":12345678901234567890,"result":123456789012345678901234567890}`, true},
	{`{"jsonrpc":"2.0","id":1,"result":null}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":null}`, true},
	{`{"jsonrpc":"2.0","id":-1.0,"result":{},"params":{"p":1}}`, true},
	{"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xff\xfe invalid UTF-8 kept\"}", true},
	{`{"jsonrpc":"2.0","id":1,"result":"\ud800 lone surrogate, \u00e9 and \/"}`, true},
	{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, true},
	{`{"jsonrpc":"2.0","method":"a custom/method with spaces","params":{}}`, true},
	{`{"jsonrpc":"2.0","id":1,"result":{},"ids":1,"Jsonrpcs":2}`, true},

	// Left to encoding/json.
	{`{}`, false},
	{`{"JSONRPC":"2.0","ID":1,"Method":"m"}`, false},
	{`{"jsonrpc":"2.0","iD":1,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{},"Result":2}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":1,"result":2}`, false},
	{`{"jsonrpc":"2.0","i\u0064":1,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m\u00e9"}`, false},
	{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\xc3\xa9\"}", false},
	{`{"jsonrpc":"2.0","id":1,"method":"m\n"}`, false},
	{`{"jsonrpc":"2.0","id":null,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":null,"method":"m"}`, false},
	{`{"jsonrpc":"2.0","id":true,"method":"m"}`, false},
	{`{"jsonrpc":"2.0","id":[1],"method":"m"}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":null}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":""}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":1}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":1}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m","result":1}`, false},
	{`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":1,"error":null}`, false},
	{`{"jsonrpc":"2.0","id":1}`, false},
	{`{"jsonrpc":"2.0","result":1}`, false},
	{`{"jsonrpc":"2.0"}`, false},
	{`{"jsonrpc":"1.0","id":1,"result":1}`, false},
	{`{"jsonrpc":2,"id":1,"result":1}`, false},
	{`{"jsonrpc":null,"id":1,"result":1}`, false},
	{`{"jsonrpc":"2\u002e0","id":1,"result":1}`, false},
	{`{"id":1,"result":1}`, false},
	{`{"jsonrpc":"2.0","id":01,"result":1}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":1.}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":.5}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":-}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":1e}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":+1}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":tru}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":nulls}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":"\x"}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":"\u12"}`, false},
	{"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"tab\tinside\"}", false},
	{`{"jsonrpc":"2.0","id":1,"result":[1,]}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"a":1,}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"a" 1}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{1:1}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":1,}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":1} x`, false},
	{`{"jsonrpc":"2.0","id":1,"result":1}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":1`, false},
	{`{"jsonrpc":"2.0","id":1,"result"`, false},
	{`{"jsonrpc":"2.0","id":1,"result":[[[[[[` + strings.Repeat("[", 300) + strings.Repeat("]", 306) + `}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, false},
}

// sameDecode checks that Decode gives for in what encoding/json alone gives.
func sameDecode(t *testing.T, in []byte) (fast bool) {
	t.Helper()
	trimmed := bytes.TrimSpace(in)
	want, wantErr := decodeSlow(trimmed)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		m, ok := decodeFast(trimmed)
		if ok {
			fast = true
			if wantErr != nil {
				t.Fatalf("fast path accepted %q, which encoding/json refuses: %v", in, wantErr)
			}
			if diff := cmp.Diff(want, m, cmp.AllowUnexported(ID{})); diff != "" {
				t.Fatalf("fast path decoded %q differently (-slow +fast):\n%s", in, diff)
			}
		}
	}
	got, err := Decode(in)
	if errors.Is(err, ErrBatch) {
		return fast
	}
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("Decode(%q) error %v, encoding/json alone %v", in, err, wantErr)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(ID{})); diff != "" {
		t.Fatalf("Decode(%q) differs from encoding/json alone (-want +got):\n%s", in, diff)
	}
	return fast
}

func TestDecodeFastMatchesSlow(t *testing.T) {
	for _, c := range decodeCases {
		name := c.in
		if len(name) > 80 {
			name = name[:80]
		}
		t.Run(name, func(t *testing.T) {
			if fast := sameDecode(t, []byte(c.in)); fast != c.fast {
				t.Errorf("fast path taken: %v, want %v", fast, c.fast)
			}
		})
	}
}

// TestDecodeFastCopies checks that a decoded message does not alias the
// line it came from (a reader reuses its buffer), and that appending to
// one raw member cannot write into another.
func TestDecodeFastCopies(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":7,"result":{"a":1},"params":[2]}`)
	m, err := Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	for i := range line {
		line[i] = 'x'
	}
	_ = append(m.Params, "garbage"...)
	if string(m.Result) != `{"a":1}` || string(m.Params) != `[2]` || m.ID.String() != "7" {
		t.Fatalf("decoded message changed with its input: %+v", m)
	}
}

// FuzzDecodeFast: the fast path decodes exactly as encoding/json does, or
// declines.
func FuzzDecodeFast(f *testing.F) {
	for _, c := range decodeCases {
		if len(c.in) < 1000 {
			f.Add([]byte(c.in))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameDecode(t, data)
	})
}

// FuzzValidValue: the fast validator agrees with json.Valid on anything
// not nested deeper than it goes.
func FuzzValidValue(f *testing.F) {
	for _, s := range []string{`1`, `-0.5e+10`, `"a\u00e9\n"`, `[1,{"a":[true,false,null]}]`, `{"a" :1 , "b":[ ]}`,
		`01`, `1.`, `"\x"`, "\"\x01\"", `[1,]`, `{"a":1,}`, `nul`, `"\ud800"`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) >= maxFastDepth {
			return
		}
		i := skipWS(data, 0)
		end := validValue(data, i, 0)
		fast := end >= 0 && skipWS(data, end) == len(data)
		if want := json.Valid(data); fast != want {
			t.Fatalf("validValue(%q) = %v, json.Valid = %v", data, fast, want)
		}
	})
}

// FuzzUnquote: Unquote decodes as json.Unmarshal into a *string does.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"a"`, `""`, `"a\"b"`, `"\u00e9"`, "\"\xff\"", `null`, `1`, `"a`, `"a" `, `"\x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := Unquote(raw)
		var want *string
		wantOK := json.Unmarshal(raw, &want) == nil && want != nil
		if ok != wantOK || ok && got != *want {
			t.Fatalf("Unquote(%q) = %q, %v; json.Unmarshal: %v, %v", raw, got, ok, want, wantOK)
		}
	})
}

// FuzzParseNumber: ParseNumber reads a number as json.Unmarshal into a
// float64 does, and nothing else.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{`1`, `-0`, `1.5e300`, `1e400`, `0x10`, `01`, `1_0`, `Inf`, `NaN`, `null`, `"1"`, `1 `, ``, `-`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(tt *testing.T, raw []byte) {
		got, ok := ParseNumber(raw)
		var want float64
		t := trimWS(raw)
		isNumber := len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9')
		wantOK := isNumber && json.Unmarshal(raw, &want) == nil
		if ok != wantOK || ok && got != want {
			tt.Fatalf("ParseNumber(%q) = %v, %v; json.Unmarshal: %v, %v", raw, got, ok, want, wantOK)
		}
	})
}

// FuzzQuote: Quote writes what json.Marshal writes.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "echo", "a\"b", "<&>", "é", "\x00", "\xff", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Quote(s), MustMarshal(s); !bytes.Equal(got, want) {
			t.Fatalf("Quote(%q) = %s, json.Marshal: %s", s, got, want)
		}
	})
}

// TestEditObject: edits through EditObject show in Get and Bytes, and
// Bytes is what the same edits through Get, ParseObject and Set give.
func TestEditObject(t *testing.T) {
	const in = `{"a":1,"_meta":{"x":1},"b":2,"_meta":{ "y" : [1, 2] ,"z":3}}`
	o := mustParse(t, in)
	m, ok := o.EditObject("_meta")
	if !ok {
		t.Fatal("EditObject(_meta) = false")
	}
	m.Delete("z")
	m.Set("t", json.RawMessage(`"tok"`))
	if again, _ := o.EditObject("_meta"); again != m {
		t.Error("a second EditObject parsed again")
	}
	const want = `{"a":1,"b":2,"_meta":{"y":[1, 2],"t":"tok"}}`
	if got := string(o.Bytes()); got != want {
		t.Errorf("Bytes() = %s, want %s", got, want)
	}
	if got, _ := o.Get("_meta"); string(got) != `{"y":[1, 2],"t":"tok"}` {
		t.Errorf("Get(_meta) = %s", got)
	}
	// The same edits, the old way.
	old := mustParse(t, in)
	raw, _ := old.Get("_meta")
	om := mustParse(t, string(raw))
	om.Delete("z")
	om.Set("t", json.RawMessage(`"tok"`))
	old.Set("_meta", om.Bytes())
	if got := string(old.Bytes()); got != want {
		t.Errorf("the old way gives %s, want %s", got, want)
	}

	c := o.Clone()
	cm, _ := c.EditObject("_meta")
	cm.Set("only", json.RawMessage(`1`))
	if got := string(o.Bytes()); got != want {
		t.Errorf("editing a clone changed the original: %s", got)
	}

	for _, bad := range []string{`{"_meta":1}`, `{"_meta":"x"}`, `{"_meta":[]}`, `{}`} {
		o := mustParse(t, bad)
		if _, ok := o.EditObject("_meta"); ok {
			t.Errorf("EditObject(_meta) of %s = true", bad)
		}
		if got := string(o.Bytes()); got != bad {
			t.Errorf("a failed EditObject changed %s to %s", bad, got)
		}
	}
	n := mustParse(t, `{"_meta":null}`)
	if m, ok := n.EditObject("_meta"); !ok || m.Len() != 0 {
		t.Errorf("EditObject of null = %v, %v; want an empty object", m, ok)
	}

	s := &Object{}
	child := &Object{}
	s.SetObject("_meta", child)
	child.Set("k", json.RawMessage(`true`))
	if got := string(s.Bytes()); got != `{"_meta":{"k":true}}` {
		t.Errorf("SetObject then edit: %s", got)
	}
	if e, _ := s.EditObject("_meta"); e != child {
		t.Error("EditObject after SetObject did not return the object set")
	}
}

// FuzzResponseID: on what Encode writes, ResponseID finds exactly the
// responses, and their ids as Decode reads them.
func FuzzResponseID(f *testing.F) {
	for _, c := range decodeCases {
		if len(c.in) < 1000 {
			f.Add([]byte(c.in))
		}
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a,\"b\"","error":{"code":1,"message":"x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			return
		}
		line := m.Encode()
		id, ok := ResponseID(line)
		if ok != m.IsResponse() || ok && id != m.ID {
			t.Fatalf("ResponseID(%s) = %v, %v; Decode: response %v, id %v", line, id, ok, m.IsResponse(), m.ID)
		}
	})
}

func TestLineBuffered(t *testing.T) {
	for _, c := range []struct {
		stream string
		want   []bool // after each ReadLine
	}{
		{"a\nb\n", []bool{true, false}},
		{"a\nb", []bool{false, false}},
		{"a\n \n\t\nb\n", []bool{true, false}},
		{"a\n \n", []bool{false}},
	} {
		r := NewReader(strings.NewReader(c.stream), 0)
		// Fill the buffer as one read would.
		for i, want := range c.want {
			if _, err := r.ReadLine(); err != nil {
				t.Fatalf("%q: ReadLine %d: %v", c.stream, i, err)
			}
			if got := r.LineBuffered(); got != want {
				t.Errorf("%q: LineBuffered after line %d = %v, want %v", c.stream, i, got, want)
			}
		}
	}
}
