package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Standard JSON-RPC 2.0 error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// ID is a request id exactly as the peer wrote it: a JSON string or number,
// kept as raw bytes so that 1, 1.0 and "1" stay distinct and 20-digit
// integers are never rounded. The zero ID means "absent".
type ID struct{ raw string }

// NewIntID returns the ID for a JSON integer.
func NewIntID(n int64) ID { return ID{strconv.FormatInt(n, 10)} }

// NewStringID returns the ID for a JSON string.
func NewStringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID{string(b)}
}

// IDFromRaw returns the ID whose JSON text is raw, as [ID.String] gives it.
// raw must be a JSON string or number.
func IDFromRaw(raw string) ID { return ID{raw} }

// NullID is the id of an error response to a request whose id could not be read.
var NullID = ID{"null"}

// IsValid reports whether the ID is present (a string, a number or null).
func (id ID) IsValid() bool { return id.raw != "" }

// IsNull reports whether the ID is JSON null.
func (id ID) IsNull() bool { return id.raw == "null" }

// Raw returns the ID's JSON bytes.
func (id ID) Raw() json.RawMessage { return json.RawMessage(id.raw) }

// String returns the ID's JSON text; use it as a map key.
func (id ID) String() string { return id.raw }

// Int returns the ID as an integer, if it is one.
func (id ID) Int() (int64, bool) {
	n, err := strconv.ParseInt(id.raw, 10, 64)
	return n, err == nil
}

// Error is a JSON-RPC error object. It implements error.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Message is one JSON-RPC message: a request (ID and Method), a notification
// (Method only) or a response (ID and Result or Error). Params and Result are
// the peer's bytes.
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// IsRequest reports whether m is a request.
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID.IsValid() }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && !m.ID.IsValid() }

// IsResponse reports whether m is a response.
func (m *Message) IsResponse() bool { return m.Method == "" }

// envelope is the decoding shape of a message.
type envelope struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// ErrBatch is returned by [Decode] for a JSON array: a batch, which the caller
// handles (or refuses) itself with [DecodeBatch].
var ErrBatch = errors.New("message is a batch")

// Decode parses one JSON-RPC message. A failure is an *Error carrying the code
// a peer should be answered with (parse error or invalid request) and, when
// it could be read, the message's id in the returned Message. A failed
// message with a method and no id member is a notification, which must not
// be answered: its Method is set.
func Decode(data []byte) (*Message, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		return nil, ErrBatch
	}
	if len(data) > 0 && data[0] == '{' {
		if m, ok := decodeFast(data); ok {
			return m, nil
		}
	}
	return decodeSlow(data)
}

// decodeSlow is Decode through encoding/json: every message the fast path
// declines, and every failure.
func decodeSlow(data []byte) (*Message, error) {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return &Message{}, Errorf(CodeInvalidRequest, "invalid request: %v", err)
		}
		return &Message{}, Errorf(CodeParseError, "parse error: %v", err)
	}
	m := &Message{Params: env.Params, Result: env.Result}
	if env.Method != nil && env.ID == nil {
		// A notification: its method is kept on failure too, so that the
		// caller can tell it must not answer it, even when it is malformed.
		m.Method = *env.Method
	}
	if env.ID != nil {
		switch c := env.ID[0]; {
		case c == '"' || c == '-' || (c >= '0' && c <= '9'):
			m.ID = ID{string(env.ID)}
		case string(env.ID) == "null":
			m.ID = NullID
		default:
			return m, Errorf(CodeInvalidRequest, "invalid request: id must be a string or a number")
		}
	}
	if env.JSONRPC == nil || *env.JSONRPC != "2.0" {
		return m, Errorf(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if env.Method != nil {
		if *env.Method == "" {
			return m, Errorf(CodeInvalidRequest, "invalid request: empty method")
		}
		if env.Result != nil || env.Error != nil {
			return m, Errorf(CodeInvalidRequest, "invalid request: a request carries no result or error")
		}
		if m.ID.IsNull() {
			return m, Errorf(CodeInvalidRequest, "invalid request: id must not be null")
		}
		if p := bytes.TrimSpace(env.Params); len(p) > 0 && p[0] != '{' && p[0] != '[' && string(p) != "null" {
			return m, Errorf(CodeInvalidRequest, "invalid request: params must be an object or an array")
		}
		m.Method = *env.Method
		return m, nil
	}
	// A response.
	if !m.ID.IsValid() {
		return m, Errorf(CodeInvalidRequest, "invalid request: no method and no id")
	}
	switch {
	case env.Result != nil && env.Error != nil:
		return m, Errorf(CodeInvalidRequest, "invalid response: both result and error")
	case string(env.Error) == "null":
		return m, Errorf(CodeInvalidRequest, "invalid response: error object: null")
	case env.Error != nil:
		var e Error
		if err := json.Unmarshal(env.Error, &e); err != nil {
			return m, Errorf(CodeInvalidRequest, "invalid response: error object: %v", err)
		}
		m.Error = &e
	case env.Result == nil:
		return m, Errorf(CodeInvalidRequest, "invalid response: neither result nor error")
	}
	return m, nil
}

// DecodeBatch splits a JSON array into its elements' bytes.
func DecodeBatch(data []byte) ([]json.RawMessage, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil {
		return nil, Errorf(CodeParseError, "parse error: %v", err)
	}
	return elems, nil
}

// Append appends m's encoding, without a trailing newline, to buf. Raw fields
// must be valid JSON (as everything out of [Decode] or [json.Marshal] is)
// and are written as they are, unless they hold line breaks (whitespace of
// a pretty-printed peer, which newline framing cannot carry): those are
// compacted, which changes no value.
func (m *Message) Append(buf []byte) []byte {
	buf = append(buf, `{"jsonrpc":"2.0"`...)
	if m.ID.IsValid() {
		buf = append(buf, `,"id":`...)
		buf = append(buf, m.ID.raw...)
	}
	if m.Method != "" {
		buf = append(buf, `,"method":`...)
		buf = AppendString(buf, m.Method)
		if len(m.Params) > 0 {
			buf = append(buf, `,"params":`...)
			buf = AppendRaw(buf, m.Params)
		}
	} else if m.Error != nil {
		// Written member by member, as json.Marshal would write the
		// struct, but with data as it is: json.Marshal would escape its
		// <, > and & (a URL's query in a -32042's data, say), and a relayed
		// error must keep the upstream's bytes.
		buf = append(buf, `,"error":{"code":`...)
		buf = strconv.AppendInt(buf, m.Error.Code, 10)
		buf = append(buf, `,"message":`...)
		buf = AppendString(buf, m.Error.Message)
		if len(m.Error.Data) > 0 {
			buf = append(buf, `,"data":`...)
			buf = AppendRaw(buf, m.Error.Data)
		}
		buf = append(buf, '}')
	} else {
		buf = append(buf, `,"result":`...)
		if len(m.Result) == 0 {
			buf = append(buf, "{}"...)
		} else {
			buf = AppendRaw(buf, m.Result)
		}
	}
	return append(buf, '}')
}

// AppendRaw appends raw JSON, compacting it if it spans lines, so that it
// fits in one line of newline-delimited JSON. raw must be valid JSON (as
// every part of a decoded message is); if it is not, null is appended.
func AppendRaw(buf []byte, raw []byte) []byte {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(buf, raw...)
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return append(buf, "null"...) // not JSON: never from Decode
	}
	return append(buf, b.Bytes()...)
}

// Encode returns m's encoding without a trailing newline, in a buffer with
// room for one.
func (m *Message) Encode() []byte {
	n := len(`{"jsonrpc":"2.0","id":,"method":,"params":}`) + 3 + len(m.ID.raw) + len(m.Method) + len(m.Params) + len(m.Result)
	if m.Error != nil {
		n += 64 + len(m.Error.Message) + len(m.Error.Data)
	}
	return m.Append(make([]byte, 0, n))
}

// EncodeRequest returns what NewRequest(NewIntID(id), method,
// params.Bytes()).Encode() returns (params nil: no params), encoded in
// one buffer: the request a client sends with an integer id of its own.
func EncodeRequest(id int64, method string, params *Object) []byte {
	n := len(`{"jsonrpc":"2.0","id":,"method":,"params":}`) + 24 + len(method)
	if params != nil {
		n += params.size()
	}
	buf := append(make([]byte, 0, n), `{"jsonrpc":"2.0","id":`...)
	buf = strconv.AppendInt(buf, id, 10)
	buf = append(buf, `,"method":`...)
	buf = AppendString(buf, method)
	if params != nil {
		buf = append(buf, `,"params":`...)
		start := len(buf)
		buf = params.AppendTo(buf)
		if p := buf[start:]; bytes.IndexByte(p, '\n') >= 0 || bytes.IndexByte(p, '\r') >= 0 {
			// As AppendRaw writes it: compacted to fit on one line.
			var b bytes.Buffer
			if json.Compact(&b, p) != nil {
				buf = append(buf[:start], "null"...)
			} else {
				buf = append(buf[:start], b.Bytes()...)
			}
		}
	}
	return append(buf, '}')
}

// AppendString appends s as a JSON string.
func AppendString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			b, _ := json.Marshal(s)
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// NewRequest returns a request message.
func NewRequest(id ID, method string, params json.RawMessage) *Message {
	return &Message{ID: id, Method: method, Params: params}
}

// NewNotification returns a notification message.
func NewNotification(method string, params json.RawMessage) *Message {
	return &Message{Method: method, Params: params}
}

// NewResult returns a success response.
func NewResult(id ID, result json.RawMessage) *Message {
	return &Message{ID: id, Result: result}
}

// NewError returns an error response. A missing id becomes null.
func NewError(id ID, err *Error) *Message {
	if !id.IsValid() {
		id = NullID
	}
	return &Message{ID: id, Error: err}
}

// MustMarshal marshals v, which must be marshalable (a value built by the
// program, never peer input).
func MustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("jsonrpc: marshaling %T: %v", v, err))
	}
	return b
}
