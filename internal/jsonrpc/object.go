package jsonrpc

import (
	"encoding/json"
	"errors"
)

// Object is a JSON object held as its members' raw bytes, in order. Editing
// one member leaves every other byte as it was, so a relay can rewrite a name
// or a token without reformatting, reordering or rounding anything else.
type Object struct {
	members []member
}

type member struct {
	key    string // decoded
	rawKey []byte // as written, quotes included
	value  json.RawMessage
}

var errNotObject = errors.New("not a JSON object")

// ParseObject splits a JSON object into its members. data must be valid JSON
// (as everything out of [Decode] is); the scan checks structure, not the
// spelling of numbers and literals. null and empty input give an empty Object.
func ParseObject(data []byte) (*Object, error) {
	o := &Object{}
	i := skipWS(data, 0)
	if i == len(data) || string(data[i:]) == "null" {
		return o, nil
	}
	if data[i] != '{' {
		return nil, errNotObject
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return o, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, errNotObject
		}
		end, err := scanString(data, i)
		if err != nil {
			return nil, err
		}
		rawKey := data[i:end]
		var key string
		if err := json.Unmarshal(rawKey, &key); err != nil {
			return nil, err
		}
		i = skipWS(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, errNotObject
		}
		i = skipWS(data, i+1)
		vend, err := scanValue(data, i)
		if err != nil {
			return nil, err
		}
		o.members = append(o.members, member{key: key, rawKey: rawKey, value: data[i:vend]})
		i = skipWS(data, vend)
		if i >= len(data) {
			return nil, errNotObject
		}
		if data[i] == '}' {
			if skipWS(data, i+1) != len(data) {
				return nil, errNotObject
			}
			return o, nil
		}
		if data[i] != ',' {
			return nil, errNotObject
		}
		i = skipWS(data, i+1)
	}
}

// Len returns the number of members.
func (o *Object) Len() int { return len(o.members) }

// Keys returns the member names in order.
func (o *Object) Keys() []string {
	keys := make([]string, len(o.members))
	for i, m := range o.members {
		keys[i] = m.key
	}
	return keys
}

// Get returns the raw value of key. With duplicate keys the last wins, as in
// encoding/json.
func (o *Object) Get(key string) (json.RawMessage, bool) {
	for i := len(o.members) - 1; i >= 0; i-- {
		if o.members[i].key == key {
			return o.members[i].value, true
		}
	}
	return nil, false
}

// Set replaces the value of key where it stands, or appends it.
func (o *Object) Set(key string, value json.RawMessage) {
	found := false
	for i := len(o.members) - 1; i >= 0; i-- {
		if o.members[i].key != key {
			continue
		}
		if !found {
			o.members[i].value = value
			found = true
			continue
		}
		o.members = append(o.members[:i], o.members[i+1:]...)
	}
	if !found {
		o.members = append(o.members, member{key: key, value: value})
	}
}

// Delete removes key and reports whether it was there.
func (o *Object) Delete(key string) bool {
	n := len(o.members)
	kept := o.members[:0]
	for _, m := range o.members {
		if m.key != key {
			kept = append(kept, m)
		}
	}
	o.members = kept
	return len(kept) != n
}

// Bytes encodes the object: untouched members byte for byte, no whitespace
// between members.
func (o *Object) Bytes() json.RawMessage {
	n := 2
	for _, m := range o.members {
		n += len(m.rawKey) + len(m.key) + len(m.value) + 4
	}
	buf := make([]byte, 0, n)
	buf = append(buf, '{')
	for i, m := range o.members {
		if i > 0 {
			buf = append(buf, ',')
		}
		if m.rawKey != nil {
			buf = append(buf, m.rawKey...)
		} else {
			buf = appendString(buf, m.key)
		}
		buf = append(buf, ':')
		buf = append(buf, m.value...)
	}
	return append(buf, '}')
}

func skipWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString returns the index just past the string starting at data[i]=='"'.
func scanString(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errors.New("unterminated string")
}

// scanValue returns the index just past the value starting at data[i].
func scanValue(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, errors.New("missing value")
	}
	switch data[i] {
	case '"':
		return scanString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, err := scanString(data, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errors.New("unterminated value")
	default:
		j := i
		for j < len(data) {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return 0, errors.New("missing value")
				}
				return j, nil
			}
			j++
		}
		return j, nil
	}
}
