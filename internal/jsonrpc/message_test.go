package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// jsonValue decodes data with numbers kept as written, for comparing JSON by
// meaning.
func jsonValue(t testing.TB, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	if dec.More() {
		t.Fatalf("trailing data after the value in %s", data)
	}
	return v
}

func TestDecodeAccepts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Message
	}{
		{
			name: "request with number id",
			in:   `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			want: Message{ID: ID{"1"}, Method: "tools/list"},
		},
		{
			name: "request with string id",
			in:   `{"jsonrpc":"2.0","id":"abc","method":"ping","params":{}}`,
			want: Message{ID: ID{`"abc"`}, Method: "ping", Params: json.RawMessage(`{}`)},
		},
		{
			name: "string id with escapes kept as written",
			in:   `{"jsonrpc":"2.0","id":"a\"b\u0041","method":"ping"}`,
			want: Message{ID: ID{`"a\"b\u0041"`}, Method: "ping"},
		},
		{
			name: "20-digit id kept exactly",
			in:   `{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`,
			want: Message{ID: ID{"12345678901234567890"}, Method: "ping"},
		},
		{
			name: "negative id",
			in:   `{"jsonrpc":"2.0","id":-7,"method":"ping"}`,
			want: Message{ID: ID{"-7"}, Method: "ping"},
		},
		{
			name: "fractional id kept distinct from the integer",
			in:   `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`,
			want: Message{ID: ID{"1.0"}, Method: "ping"},
		},
		{
			name: "notification: no id",
			in:   `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			want: Message{Method: "notifications/initialized"},
		},
		{
			name: "params array and method with escapes",
			in:   `{"jsonrpc":"2.0","id":2,"method":"tools\/call","params":[1, 2.50, "x"]}`,
			want: Message{ID: ID{"2"}, Method: "tools/call", Params: json.RawMessage(`[1, 2.50, "x"]`)},
		},
		{
			name: "params null",
			in:   `{"jsonrpc":"2.0","id":3,"method":"m","params":null}`,
			want: Message{ID: ID{"3"}, Method: "m", Params: json.RawMessage(`null`)},
		},
		{
			name: "members in any order, surrounding whitespace",
			in:   " \t{\"params\":{\"a\": 1},\"method\":\"m\",\"id\":4,\"jsonrpc\":\"2.0\"}\r\n",
			want: Message{ID: ID{"4"}, Method: "m", Params: json.RawMessage(`{"a": 1}`)},
		},
		{
			name: "result kept as raw bytes",
			in:   `{"jsonrpc":"2.0","id":5,"result":{"big":123456789012345678901234567890, "f": 1.50}}`,
			want: Message{ID: ID{"5"}, Result: json.RawMessage(`{"big":123456789012345678901234567890, "f": 1.50}`)},
		},
		{
			name: "result null",
			in:   `{"jsonrpc":"2.0","id":6,"result":null}`,
			want: Message{ID: ID{"6"}, Result: json.RawMessage(`null`)},
		},
		{
			name: "error response",
			in:   `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no such method","data":{"m":"foo"}}}`,
			want: Message{ID: ID{`"x"`}, Error: &Error{Code: -32601, Message: "no such method", Data: json.RawMessage(`{"m":"foo"}`)}},
		},
		{
			name: "error response with null id",
			in:   `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
			want: Message{ID: NullID, Error: &Error{Code: -32700, Message: "parse error"}},
		},
		{
			name: "duplicate member: the last wins",
			in:   `{"jsonrpc":"2.0","id":1,"id":2,"method":"a","method":"b"}`,
			want: Message{ID: ID{"2"}, Method: "b"},
		},
		{
			name: "unknown members ignored",
			in:   `{"jsonrpc":"2.0","id":1,"method":"a","extra":{"x":[1]}}`,
			want: Message{ID: ID{"1"}, Method: "a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode([]byte(tt.in))
			if err != nil {
				t.Fatalf("Decode(%s): %v", tt.in, err)
			}
			if diff := cmp.Diff(&tt.want, got, cmp.AllowUnexported(ID{})); diff != "" {
				t.Errorf("Decode(%s) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestDecodeKind(t *testing.T) {
	tests := []struct {
		in                       string
		request, notif, response bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"m"}`, true, false, false},
		{`{"jsonrpc":"2.0","method":"m"}`, false, true, false},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, false, false, true},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}`, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			m, err := Decode([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			got := [3]bool{m.IsRequest(), m.IsNotification(), m.IsResponse()}
			want := [3]bool{tt.request, tt.notif, tt.response}
			if got != want {
				t.Errorf("IsRequest, IsNotification, IsResponse = %v, want %v", got, want)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		code   int64
		id     ID     // the id the failed message still carries
		substr string // part of the error message
	}{
		{"empty input", ``, CodeParseError, ID{}, "parse error"},
		{"blank input", " \r\n", CodeParseError, ID{}, "parse error"},
		{"not json", `hello`, CodeParseError, ID{}, "parse error"},
		{"truncated object", `{"jsonrpc":"2.0","id":1`, CodeParseError, ID{}, "parse error"},
		{"missing value", `{"jsonrpc":}`, CodeParseError, ID{}, "parse error"},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"m"} x`, CodeParseError, ID{}, "parse error"},
		{"trailing comma", `{"jsonrpc":"2.0","id":1,"method":"m",}`, CodeParseError, ID{}, "parse error"},
		{"a string", `"hello"`, CodeInvalidRequest, ID{}, "invalid request"},
		{"a number", `42`, CodeInvalidRequest, ID{}, "invalid request"},
		{"a boolean", `true`, CodeInvalidRequest, ID{}, "invalid request"},
		{"null", `null`, CodeInvalidRequest, ID{}, `"jsonrpc" must be "2.0"`},
		{"empty object", `{}`, CodeInvalidRequest, ID{}, `"jsonrpc" must be "2.0"`},
		{"jsonrpc is a number", `{"jsonrpc":2.0,"id":1,"method":"m"}`, CodeInvalidRequest, ID{}, "invalid request"},
		{"method is a number", `{"jsonrpc":"2.0","id":1,"method":1}`, CodeInvalidRequest, ID{}, "invalid request"},
		{"missing jsonrpc", `{"id":1,"method":"m"}`, CodeInvalidRequest, ID{"1"}, `"jsonrpc" must be "2.0"`},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":"a","method":"m"}`, CodeInvalidRequest, ID{`"a"`}, `"jsonrpc" must be "2.0"`},
		{"id true", `{"jsonrpc":"2.0","id":true,"method":"m"}`, CodeInvalidRequest, ID{}, "id must be a string or a number"},
		{"id object", `{"jsonrpc":"2.0","id":{},"method":"m"}`, CodeInvalidRequest, ID{}, "id must be a string or a number"},
		{"id array", `{"jsonrpc":"2.0","id":[1],"method":"m"}`, CodeInvalidRequest, ID{}, "id must be a string or a number"},
		{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, CodeInvalidRequest, ID{"1"}, "empty method"},
		{"request with result", `{"jsonrpc":"2.0","id":1,"method":"m","result":{}}`, CodeInvalidRequest, ID{"1"}, "no result or error"},
		{"request with error", `{"jsonrpc":"2.0","id":1,"method":"m","error":{"code":1,"message":"x"}}`, CodeInvalidRequest, ID{"1"}, "no result or error"},
		{"notification with result", `{"jsonrpc":"2.0","method":"m","result":1}`, CodeInvalidRequest, ID{}, "no result or error"},
		{"request with null id", `{"jsonrpc":"2.0","id":null,"method":"m"}`, CodeInvalidRequest, NullID, "id must not be null"},
		{"params a string", `{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}`, CodeInvalidRequest, ID{"1"}, "params must be an object or an array"},
		{"params a number", `{"jsonrpc":"2.0","id":1,"method":"m","params":3}`, CodeInvalidRequest, ID{"1"}, "params must be an object or an array"},
		{"params true", `{"jsonrpc":"2.0","method":"m","params":true}`, CodeInvalidRequest, ID{}, "params must be an object or an array"},
		{"no method and no id", `{"jsonrpc":"2.0"}`, CodeInvalidRequest, ID{}, "no method and no id"},
		{"result without id", `{"jsonrpc":"2.0","result":{}}`, CodeInvalidRequest, ID{}, "no method and no id"},
		{"both result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, CodeInvalidRequest, ID{"1"}, "both result and error"},
		{"result and null error", `{"jsonrpc":"2.0","id":1,"result":{},"error":null}`, CodeInvalidRequest, ID{"1"}, "both result and error"},
		{"error a string", `{"jsonrpc":"2.0","id":1,"error":"boom"}`, CodeInvalidRequest, ID{"1"}, "error object"},
		{"error code a string", `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`, CodeInvalidRequest, ID{"1"}, "error object"},
		{"error null", `{"jsonrpc":"2.0","id":1,"error":null}`, CodeInvalidRequest, ID{"1"}, "error object"},
		{"neither result nor error", `{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest, ID{"1"}, "neither result nor error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode([]byte(tt.in))
			var rpcErr *Error
			if !errors.As(err, &rpcErr) {
				t.Fatalf("Decode(%s) = %+v, %v; want a *jsonrpc.Error", tt.in, m, err)
			}
			if rpcErr.Code != tt.code {
				t.Errorf("Decode(%s): got code %d, want %d (%v)", tt.in, rpcErr.Code, tt.code, rpcErr)
			}
			if !strings.Contains(rpcErr.Message, tt.substr) {
				t.Errorf("Decode(%s): got message %q, want it to contain %q", tt.in, rpcErr.Message, tt.substr)
			}
			if m == nil {
				t.Fatalf("Decode(%s) returned a nil message with its error", tt.in)
			}
			if m.ID != tt.id {
				t.Errorf("Decode(%s): got id %q, want %q", tt.in, m.ID, tt.id)
			}
		})
	}
}

func TestDecodeBatch(t *testing.T) {
	for _, in := range []string{`[]`, `[{"jsonrpc":"2.0","id":1,"method":"m"}]`, " \n[1,2]", `[`} {
		t.Run(in, func(t *testing.T) {
			m, err := Decode([]byte(in))
			if !errors.Is(err, ErrBatch) {
				t.Errorf("Decode(%q) = %v, %v; want ErrBatch", in, m, err)
			}
		})
	}
	elems, err := DecodeBatch([]byte(`[{"a":1}, 2 ,"x"]`))
	if err != nil {
		t.Fatal(err)
	}
	want := []json.RawMessage{json.RawMessage(`{"a":1}`), json.RawMessage(`2`), json.RawMessage(`"x"`)}
	if diff := cmp.Diff(want, elems); diff != "" {
		t.Errorf("DecodeBatch mismatch (-want +got):\n%s", diff)
	}
	var rpcErr *Error
	if _, err := DecodeBatch([]byte(`[1,`)); !errors.As(err, &rpcErr) || rpcErr.Code != CodeParseError {
		t.Errorf("DecodeBatch of a truncated array: got %v, want a parse error", err)
	}
}

func TestEncode(t *testing.T) {
	tests := []struct {
		name string
		m    *Message
		want string
	}{
		{
			name: "request",
			m:    NewRequest(NewIntID(7), "tools/call", json.RawMessage(`{"b": 1,  "a":[1.0, 2e10]}`)),
			want: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"b": 1,  "a":[1.0, 2e10]}}`,
		},
		{
			name: "request without params",
			m:    NewRequest(NewStringID("x"), "ping", nil),
			want: `{"jsonrpc":"2.0","id":"x","method":"ping"}`,
		},
		{
			name: "notification",
			m:    NewNotification("notifications/progress", json.RawMessage(`{"progressToken":"t","progress":1}`)),
			want: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
		},
		{
			name: "method needing escapes",
			m:    NewNotification("a\"b\\c\nd\u00e9\u2028<>", nil),
			want: `{"jsonrpc":"2.0","method":"a\"b\\c\nd` + "\u00e9" + `\u2028\u003c\u003e"}`,
		},
		{
			name: "method with html characters only",
			m:    NewNotification("a<b>&c", nil),
			want: `{"jsonrpc":"2.0","method":"a<b>&c"}`,
		},
		{
			name: "result kept exactly",
			m:    NewResult(ID{"12345678901234567890"}, json.RawMessage(`{"n":123456789012345678901234567890,"s":"\u00e9"}`)),
			want: `{"jsonrpc":"2.0","id":12345678901234567890,"result":{"n":123456789012345678901234567890,"s":"\u00e9"}}`,
		},
		{
			name: "empty result becomes an object",
			m:    NewResult(NewIntID(1), nil),
			want: `{"jsonrpc":"2.0","id":1,"result":{}}`,
		},
		{
			name: "error",
			m:    NewError(NewIntID(-1), &Error{Code: CodeInvalidParams, Message: "bad", Data: json.RawMessage(`{"x":1}`)}),
			want: `{"jsonrpc":"2.0","id":-1,"error":{"code":-32602,"message":"bad","data":{"x":1}}}`,
		},
		{
			name: "error without id gets null",
			m:    NewError(ID{}, Errorf(CodeParseError, "parse error: %s", "x")),
			want: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: x"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(tt.m.Encode()); got != tt.want {
				t.Errorf("Encode:\ngot  %s\nwant %s", got, tt.want)
			}
			prefix := []byte("prefix:")
			if got := string(tt.m.Append(prefix)); got != "prefix:"+tt.want {
				t.Errorf("Append:\ngot  %s\nwant prefix:%s", got, tt.want)
			}
			if !json.Valid(tt.m.Encode()) {
				t.Errorf("Encode gave invalid JSON: %s", tt.m.Encode())
			}
		})
	}
}

// TestRoundTrip checks that a decoded message encodes to the same bytes
// wherever mcpx promises to keep them (ids, params, results), and to the same
// meaning elsewhere.
func TestRoundTrip(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{
			`{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"x","arguments":{"n":1.50,"s":"a\"}{b\\"}}}`,
			`{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"x","arguments":{"n":1.50,"s":"a\"}{b\\"}}}`,
		},
		{
			`{"params":{ "z" : [ 1 , 2 ] },"method":"notifications\/message","jsonrpc":"2.0"}`,
			`{"jsonrpc":"2.0","method":"notifications/message","params":{ "z" : [ 1 , 2 ] }}`,
		},
		{
			`{"jsonrpc":"2.0","id":"\u0031","result":{"content":[{"type":"text","text":"\ud83d\ude00"}]}}`,
			`{"jsonrpc":"2.0","id":"\u0031","result":{"content":[{"type":"text","text":"\ud83d\ude00"}]}}`,
		},
		{
			`{"jsonrpc":"2.0","id":1.0,"result":null}`,
			`{"jsonrpc":"2.0","id":1.0,"result":null}`,
		},
		{
			`{"jsonrpc":"2.0","id":null,"error":{"message":"m","code":-32700}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}`,
		},
		{ // an error's data as the peer wrote it: a URL's & unescaped, spacing kept
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32042,"message":"Needs <you> & me","data":{"elicitations":[{"url":"https://x.test/?a=1&b=<2>", "n":1.0}]}}}`,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32042,"message":"Needs <you> & me","data":{"elicitations":[{"url":"https://x.test/?a=1&b=<2>", "n":1.0}]}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			m, err := Decode([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(m.Encode()); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}

	// Error data is re-marshaled: equal in meaning, not necessarily in bytes.
	in := `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"a<b","data":{"k": [1, "x&y"]}}}`
	m, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jsonValue(t, []byte(in)), jsonValue(t, m.Encode())); diff != "" {
		t.Errorf("error response changed meaning (-want +got):\n%s", diff)
	}
}

func TestID(t *testing.T) {
	tests := []struct {
		id            ID
		valid, null   bool
		str           string
		n             int64
		isInt         bool
		wantRawString string
	}{
		{ID{}, false, false, "", 0, false, ""},
		{NullID, true, true, "null", 0, false, "null"},
		{NewIntID(-42), true, false, "-42", -42, true, "-42"},
		{NewIntID(9007199254740993), true, false, "9007199254740993", 9007199254740993, true, "9007199254740993"},
		{NewStringID("a\"b"), true, false, `"a\"b"`, 0, false, `"a\"b"`},
		{NewStringID("7"), true, false, `"7"`, 0, false, `"7"`},
		{ID{"12345678901234567890"}, true, false, "12345678901234567890", 0, false, "12345678901234567890"},
		{ID{"1.0"}, true, false, "1.0", 0, false, "1.0"},
	}
	for _, tt := range tests {
		t.Run(tt.str, func(t *testing.T) {
			if got := tt.id.IsValid(); got != tt.valid {
				t.Errorf("IsValid() = %v, want %v", got, tt.valid)
			}
			if got := tt.id.IsNull(); got != tt.null {
				t.Errorf("IsNull() = %v, want %v", got, tt.null)
			}
			if got := tt.id.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
			if got := string(tt.id.Raw()); got != tt.wantRawString {
				t.Errorf("Raw() = %q, want %q", got, tt.wantRawString)
			}
			n, ok := tt.id.Int()
			if ok != tt.isInt || (ok && n != tt.n) {
				t.Errorf("Int() = %d, %v; want %d, %v", n, ok, tt.n, tt.isInt)
			}
		})
	}
}

func TestErrorType(t *testing.T) {
	err := error(Errorf(CodeMethodNotFound, "method not found: %s", "x"))
	if got, want := err.Error(), "jsonrpc error -32601: method not found: x"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != CodeMethodNotFound {
		t.Errorf("errors.As: got %v, want code %d", rpcErr, CodeMethodNotFound)
	}
}

func TestMustMarshal(t *testing.T) {
	if got, want := string(MustMarshal(map[string]int{"a": 1})), `{"a":1}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustMarshal of a channel did not panic")
		}
	}()
	MustMarshal(make(chan int))
}

func TestAppendCompactsLineBreaks(t *testing.T) {
	m := NewResult(NewIntID(1), json.RawMessage("{\n  \"a\": [1,\r\n 2],\n \"s\": \"x y\"\n}"))
	got := string(m.Encode())
	want := `{"jsonrpc":"2.0","id":1,"result":{"a":[1,2],"s":"x y"}}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	n := NewRequest(NewIntID(2), "m", json.RawMessage("{ \"keep\" : 1 }"))
	if got, want := string(n.Encode()), `{"jsonrpc":"2.0","id":2,"method":"m","params":{ "keep" : 1 }}`; got != want {
		t.Errorf("one-line raw params changed: got %s, want %s", got, want)
	}
}

// EncodeRequest must write what the Message path writes: a request with
// params encoded by Bytes, line breaks inside them compacted.
func TestEncodeRequest(t *testing.T) {
	objects := []string{
		`{}`,
		`{"name":"echo","arguments":{"n":1}}`,
		"{\"name\":\"t\",\"arguments\":{\n  \"a\": [1,\r\n 2]\n},\"_meta\":{\"k\":\"v\"}}",
		`{"n\u00e9":"x","a":"<&>"}`,
	}
	for _, id := range []int64{0, 7, -3, 1 << 62} {
		for _, method := range []string{"tools/call", "m\u00e9thod \"q\""} {
			if got, want := EncodeRequest(id, method, nil), NewRequest(NewIntID(id), method, nil).Encode(); string(got) != string(want) {
				t.Errorf("EncodeRequest(%d, %q, nil) = %s, want %s", id, method, got, want)
			}
			for _, src := range objects {
				obj, err := ParseObject([]byte(src))
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := obj.EditObject("_meta"); ok {
					obj.Set("added", json.RawMessage(`true`))
				}
				obj.Set("name", Quote("renamed"))
				got := EncodeRequest(id, method, obj)
				want := NewRequest(NewIntID(id), method, obj.Bytes()).Encode()
				if string(got) != string(want) {
					t.Errorf("EncodeRequest(%d, %q, %s) = %s, want %s", id, method, src, got, want)
				}
			}
		}
	}
}
