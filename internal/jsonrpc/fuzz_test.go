package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecode checks that Decode never panics, that its failures are
// *Error values with a code a peer can be answered with, and that an
// accepted message encodes to JSON that decodes to the same fields.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"n":1.50}}}`,
		`{"jsonrpc":"2.0","id":"a\"b","method":"m\u00e9\n","params":[1,"}"]}`,
		`{"jsonrpc":"2.0","id":12345678901234567890,"result":{"big":123456789012345678901234567890}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p<e>&","data":{"x": [1, 2]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":0.5}}`,
		`{"jsonrpc":"2.0","id":1,"result":null}`,
		`{"jsonrpc":"2.0","id":1,"error":null}`,
		`{"jsonrpc":"2.0","id":true,"method":"m"}`,
		`{"JSONRPC":"2.0","ID":1,"Method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"m"}]`,
		`{"jsonrpc":"2.0","id":1`,
		`"x"`,
		`null`,
		``,
		"\xff",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if errors.Is(err, ErrBatch) {
			return
		}
		if err != nil {
			var rpcErr *Error
			if !errors.As(err, &rpcErr) {
				t.Fatalf("error %v is %T, want *jsonrpc.Error", err, err)
			}
			if rpcErr.Code != CodeParseError && rpcErr.Code != CodeInvalidRequest {
				t.Fatalf("error code %d, want parse error or invalid request", rpcErr.Code)
			}
			if m == nil {
				t.Fatal("a failed Decode returned no message")
			}
			return
		}
		enc := m.Encode()
		if !json.Valid(enc) {
			t.Fatalf("Encode gave invalid JSON %s\ninput %q", enc, data)
		}
		again, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-decoding %s: %v\ninput %q", enc, err, data)
		}
		if again.ID != m.ID || again.Method != m.Method ||
			!bytes.Equal(again.Params, m.Params) || !bytes.Equal(again.Result, m.Result) {
			t.Fatalf("round trip changed the message:\nfirst %+v\nagain %+v\ninput %q", m, again, data)
		}
		if (again.Error == nil) != (m.Error == nil) {
			t.Fatalf("round trip changed the error: got %v, want %v", again.Error, m.Error)
		}
		if m.Error != nil {
			if again.Error.Code != m.Error.Code || again.Error.Message != m.Error.Message {
				t.Fatalf("round trip changed the error: got %+v, want %+v", again.Error, m.Error)
			}
			if (len(again.Error.Data) == 0) != (len(m.Error.Data) == 0) {
				t.Fatalf("round trip changed the error data: got %s, want %s", again.Error.Data, m.Error.Data)
			}
			if len(m.Error.Data) > 0 {
				if diff := cmp.Diff(jsonValue(t, m.Error.Data), jsonValue(t, again.Error.Data)); diff != "" {
					t.Fatalf("round trip changed the error data (-want +got):\n%s", diff)
				}
			}
		}
	})
}

// FuzzReadLine checks the Reader against a plain model of the framing: split
// at newlines; a segment longer than the limit is oversize; a blank one is
// skipped; any other is returned with its surrounding whitespace trimmed.
// It also checks that reading always ends.
func FuzzReadLine(f *testing.F) {
	for _, seed := range []struct {
		data  string
		limit uint8
	}{
		{"{}\n", 2},
		{"\n\n  \r\n{\"a\":1}\r\n", 8},
		{"12345\n123456\n", 5},
		{"12345", 5},
		{"123456", 5},
		{`{"id":12345,"x":1}` + "\n{}", 4},
		{"     \n", 2},
		{"a\rb\n", 3},
		{"", 1},
	} {
		f.Add([]byte(seed.data), seed.limit)
	}
	f.Fuzz(func(t *testing.T, data []byte, limitByte uint8) {
		limit := int(limitByte%32) + 1

		// The model.
		type event struct {
			line string
			over bool
		}
		var want []event
		for rest := data; len(rest) > 0; {
			seg := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				seg, rest = rest[:i], rest[i+1:]
			} else {
				rest = nil
			}
			switch {
			case len(seg) > limit:
				want = append(want, event{over: true})
			case len(bytes.TrimSpace(seg)) > 0:
				want = append(want, event{line: string(bytes.TrimSpace(seg))})
			}
		}

		r := NewReader(bytes.NewReader(data), limit)
		var got []event
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatalf("ReadLine did not reach the end after %d calls", i)
			}
			line, err := r.ReadLine()
			var over *OversizeError
			if errors.As(err, &over) {
				if over.Limit != limit {
					t.Fatalf("OversizeError.Limit = %d, want %d", over.Limit, limit)
				}
				if over.ID.IsValid() && !bytes.Contains(data, []byte(over.ID.String())) {
					t.Fatalf("OversizeError.ID = %s, not in the input", over.ID)
				}
				got = append(got, event{over: true})
				continue
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("ReadLine: %v", err)
			}
			if len(line) > limit {
				t.Fatalf("got a %d-byte line over the %d-byte limit: %q", len(line), limit, line)
			}
			got = append(got, event{line: string(line)})
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(event{})); diff != "" {
			t.Fatalf("limit %d, input %q (-want +got):\n%s", limit, data, diff)
		}
	})
}

// FuzzParseObject checks that ParseObject accepts every JSON object and
// gives bytes equal in meaning, never panics on anything else, and that Set
// and Delete keep an object valid and mean what they say.
func FuzzParseObject(f *testing.F) {
	for _, seed := range []struct {
		data, key, value string
	}{
		{`{"a":1,"b":[1,2,{"c":"}"}],"a":"x"}`, "a", `{"new":[]}`},
		{`{"s":"}{][\",\\","t":"\u007d"}`, "t", `"\"}"`},
		{` { "k" : -1.5e+10 , "n" : null } `, "z", `true`},
		{`{"a\u0062":{}}`, "ab", `123456789012345678901234567890`},
		{`{}`, "\"\n", `[]`},
		{`null`, "x", `1`},
		{`{"a":[}`, "a", `1`},
		{`{"a":1,}`, "a", `1`},
		{`[1,2]`, "a", `1`},
		{`{"a":"\x"}`, "a", `1`},
		{``, "", ``},
	} {
		f.Add([]byte(seed.data), seed.key, []byte(seed.value))
	}
	f.Fuzz(func(t *testing.T, data []byte, key string, value []byte) {
		o, err := ParseObject(data)
		isObject := json.Valid(data) && bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))
		if !isObject {
			if err == nil {
				_ = o.Bytes() // may be anything, must not panic
			}
			return
		}
		if err != nil {
			t.Fatalf("ParseObject(%s): %v", data, err)
		}
		if diff := cmp.Diff(jsonValue(t, data), jsonValue(t, o.Bytes())); diff != "" {
			t.Fatalf("Bytes() of %s changed its meaning (-want +got):\n%s", data, diff)
		}
		if got, want := o.Verbatim(data), bytes.Equal(o.Bytes(), data); got != want {
			t.Fatalf("Verbatim(%s) = %v, but Bytes() is %s", data, got, o.Bytes())
		}
		if len(o.Keys()) != o.Len() {
			t.Fatalf("Len() = %d, Keys() has %d", o.Len(), len(o.Keys()))
		}
		// Each name as encoding/json decodes it (the fast path for plain
		// names must agree).
		for _, m := range o.members {
			var want string
			if err := json.Unmarshal(m.rawKey, &want); err != nil || m.key != want {
				t.Fatalf("member name %s decoded as %q, encoding/json: %q (%v)", m.rawKey, m.key, want, err)
			}
		}

		if !utf8.ValidString(key) || !json.Valid(value) {
			return
		}
		want := jsonValue(t, data).(map[string]any)
		o.Set(key, value)
		want[key] = jsonValue(t, value)
		if got, ok := o.Get(key); !ok || !bytes.Equal(got, value) {
			t.Fatalf("Get(%q) after Set = %s, %v; want %s", key, got, ok, value)
		}
		checkMeaning(t, o, want)

		if !o.Delete(key) {
			t.Fatalf("Delete(%q) after Set = false", key)
		}
		delete(want, key)
		if _, ok := o.Get(key); ok {
			t.Fatalf("Get(%q) after Delete found it", key)
		}
		checkMeaning(t, o, want)
	})
}

func checkMeaning(t *testing.T, o *Object, want map[string]any) {
	t.Helper()
	b := o.Bytes()
	if !json.Valid(b) {
		t.Fatalf("Bytes() is not valid JSON: %s", b)
	}
	if diff := cmp.Diff(any(want), jsonValue(t, b)); diff != "" {
		t.Fatalf("Bytes() %s mismatch (-want +got):\n%s", b, diff)
	}
}
