package jsonrpc

import (
	"encoding/json"
	"strconv"
)

// The fast paths of decoding: plain input (member names and methods of
// printable ASCII without escapes, ids that are strings or numbers) is
// validated and split in one pass, without reflection. Anything else is
// left to encoding/json, so that every input decodes exactly as it did
// through encoding/json alone: the fast paths either give the same result
// or decline Saves most of a decode's time and allocations
// (BenchmarkDecode and BenchmarkReadLine in internal/jsonrpc).

// isPlain reports whether b, the inside of a JSON string, is printable
// ASCII without a quote or a backslash: its own decoding.
func isPlain(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// maxFastDepth bounds the nesting the fast path validates; deeper input
// goes to encoding/json, which has its own limit.
const maxFastDepth = 200

// validValue returns the index just past the JSON value that starts at
// data[i], validated as encoding/json validates (strings may hold invalid
// UTF-8), or -1 if it is not valid or nests deeper than maxFastDepth.
func validValue(data []byte, i, depth int) int {
	if i >= len(data) {
		return -1
	}
	switch c := data[i]; c {
	case '"':
		return validString(data, i)
	case '{':
		if depth >= maxFastDepth {
			return -1
		}
		i = skipWS(data, i+1)
		if i < len(data) && data[i] == '}' {
			return i + 1
		}
		for {
			if i >= len(data) || data[i] != '"' {
				return -1
			}
			if i = validString(data, i); i < 0 {
				return -1
			}
			i = skipWS(data, i)
			if i >= len(data) || data[i] != ':' {
				return -1
			}
			if i = validValue(data, skipWS(data, i+1), depth+1); i < 0 {
				return -1
			}
			var end bool
			if i, end = afterItem(data, i, '}'); i < 0 || end {
				return i
			}
		}
	case '[':
		if depth >= maxFastDepth {
			return -1
		}
		i = skipWS(data, i+1)
		if i < len(data) && data[i] == ']' {
			return i + 1
		}
		for {
			if i = validValue(data, i, depth+1); i < 0 {
				return -1
			}
			var end bool
			if i, end = afterItem(data, i, ']'); i < 0 || end {
				return i
			}
		}
	case 't':
		return literal(data, i, "true")
	case 'f':
		return literal(data, i, "false")
	case 'n':
		return literal(data, i, "null")
	default:
		return validNumber(data, i)
	}
}

func literal(data []byte, i int, lit string) int {
	if len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit {
		return i + len(lit)
	}
	return -1
}

// validString returns the index just past the string at data[i] == '"', or
// -1 if it is unterminated, holds a control character or a bad escape.
func validString(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1
		case c == '\\':
			j++
			if j >= len(data) {
				return -1
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(data)-j <= 4 || !isHex(data[j+1]) || !isHex(data[j+2]) || !isHex(data[j+3]) || !isHex(data[j+4]) {
					return -1
				}
				j += 4
			default:
				return -1
			}
		case c < 0x20:
			return -1
		}
	}
	return -1
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// validNumber returns the index just past the JSON number at data[i], or -1.
func validNumber(data []byte, i int) int {
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return -1
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		i = digits(data, i+1)
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		j := digits(data, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(data, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// trimWS trims JSON whitespace.
func trimWS(b []byte) []byte {
	b = b[skipWS(b, 0):]
	for len(b) > 0 {
		switch b[len(b)-1] {
		case ' ', '\t', '\n', '\r':
			b = b[:len(b)-1]
			continue
		}
		break
	}
	return b
}

func digits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

// The top-level members Decode reads.
const (
	fieldJSONRPC = iota
	fieldID
	fieldMethod
	fieldParams
	fieldResult
	fieldError
	numFields
)

var fieldNames = [numFields]string{"jsonrpc", "id", "method", "params", "result", "error"}

// fieldOf returns the field a plain member name is, -1 for none, or -2 for
// a name encoding/json would match case-insensitively (left to it).
func fieldOf(key []byte) int {
	switch string(key) {
	case "jsonrpc":
		return fieldJSONRPC
	case "id":
		return fieldID
	case "method":
		return fieldMethod
	case "params":
		return fieldParams
	case "result":
		return fieldResult
	case "error":
		return fieldError
	}
	for _, name := range fieldNames {
		if asciiEqualFold(key, name) {
			return -2
		}
	}
	return -1
}

func asciiEqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if c != lower[i] && !('A' <= c && c <= 'Z' && c+('a'-'A') == lower[i]) {
			return false
		}
	}
	return true
}

// decodeFast decodes a plain, valid message (data trimmed, starting with
// '{'), or reports false for Decode to take the slow path, which also
// explains every failure.
func decodeFast(data []byte) (*Message, bool) {
	var (
		have [numFields]bool
		from [numFields]int
		to   [numFields]int
	)
	i := skipWS(data, 1)
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, false
		}
		kend := validString(data, i)
		if kend < 0 {
			return nil, false
		}
		key := data[i+1 : kend-1]
		if !isPlain(key) {
			return nil, false
		}
		f := fieldOf(key)
		i = skipWS(data, kend)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipWS(data, i+1)
		end := validValue(data, i, 1)
		switch {
		case end < 0 || f == -2:
			return nil, false
		case f >= 0:
			if have[f] {
				return nil, false // a duplicate: the last wins, and encoding/json says how
			}
			have[f], from[f], to[f] = true, i, end
		}
		i = skipWS(data, end)
		if i >= len(data) {
			return nil, false
		}
		if data[i] == '}' {
			if skipWS(data, i+1) != len(data) {
				return nil, false
			}
			break
		}
		if data[i] != ',' {
			return nil, false
		}
		i = skipWS(data, i+1)
	}
	raw := func(f int) []byte { return data[from[f]:to[f]] }
	if !have[fieldJSONRPC] || string(raw(fieldJSONRPC)) != `"2.0"` || have[fieldError] {
		return nil, false
	}
	var id []byte
	if have[fieldID] {
		id = raw(fieldID)
		if c := id[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
			return nil, false // null or not an id: the slow path
		}
	}
	m := &Message{}
	if have[fieldMethod] {
		method := raw(fieldMethod)
		if len(method) < 3 || method[0] != '"' || !isPlain(method[1:len(method)-1]) || have[fieldResult] {
			return nil, false
		}
		if have[fieldParams] {
			if p := raw(fieldParams); p[0] != '{' && p[0] != '[' && string(p) != "null" {
				return nil, false
			}
		}
		name := method[1 : len(method)-1]
		if s, ok := commonName(name); ok {
			m.Method = s
		} else {
			m.Method = string(name)
		}
	} else if !have[fieldID] || !have[fieldResult] {
		return nil, false
	}
	if id != nil {
		m.ID = ID{string(id)}
	}
	// One copy of what the message keeps; the caller's buffer is reused.
	n := 0
	if have[fieldParams] {
		n += to[fieldParams] - from[fieldParams]
	}
	if have[fieldResult] {
		n += to[fieldResult] - from[fieldResult]
	}
	buf := make([]byte, 0, n)
	if have[fieldParams] {
		buf = append(buf, raw(fieldParams)...)
		m.Params = buf[:len(buf):len(buf)]
	}
	if have[fieldResult] {
		k := len(buf)
		buf = append(buf, raw(fieldResult)...)
		m.Result = buf[k:len(buf):len(buf)]
	}
	return m, true
}

// Quote returns the JSON encoding of s, as [json.Marshal] writes it.
func Quote(s string) json.RawMessage {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return MustMarshal(s)
		}
	}
	b := make([]byte, len(s)+2)
	b[0] = '"'
	copy(b[1:], s)
	b[len(b)-1] = '"'
	return b
}

// Unquote decodes raw, a JSON value, if it is a string; ok is false for
// any other value, null included.
func Unquote(raw []byte) (string, bool) {
	raw = trimWS(raw)
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if raw[len(raw)-1] == '"' && isPlain(raw[1:len(raw)-1]) {
		if s, ok := commonName(raw[1 : len(raw)-1]); ok {
			return s, true
		}
		return string(raw[1 : len(raw)-1]), true
	}
	return unquoteSlow(raw)
}

// unquoteSlow is Unquote through encoding/json (apart, so that the fast
// path allocates only its result).
func unquoteSlow(raw []byte) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// ParseNumber returns the value of raw, a JSON value, if it is a number
// that fits a float64: what [json.Unmarshal] into a float64 gives.
func ParseNumber(raw []byte) (float64, bool) {
	raw = trimWS(raw)
	if len(raw) == 0 || validNumber(raw, 0) != len(raw) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(raw), 64) // string(raw) does not escape: no allocation up to 32 bytes
	return v, err == nil
}

// afterItem reads what follows a member or element at i: a comma (it
// returns where the next one starts) or closer (it returns the index past
// the container, and true); -1 for anything else.
func afterItem(data []byte, i int, closer byte) (int, bool) {
	i = skipWS(data, i)
	if i >= len(data) {
		return -1, false
	}
	switch data[i] {
	case ',':
		return skipWS(data, i+1), false
	case closer:
		return i + 1, true
	}
	return -1, false
}
