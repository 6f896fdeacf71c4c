package jsonrpc

import (
	"encoding/json"
	"errors"
	"iter"
)

// Object is a JSON object held as its members' raw bytes, in order. Editing
// one member leaves every other byte as it was, so a relay can rewrite a name
// or a token without reformatting, reordering or rounding anything else.
//
// A member whose value is itself an object can be edited in place with
// [Object.EditObject]: it is parsed once, however many edits follow, and
// encoded once, by Bytes.
type Object struct {
	members []member
	// inline holds the members of a small object, so that parsing one
	// takes one allocation.
	inline [4]member
}

type member struct {
	key    string // decoded
	rawKey []byte // as written, quotes included
	value  json.RawMessage
	obj    *Object // the value parsed for editing (EditObject); value is stale then
}

var errNotObject = errors.New("not a JSON object")

// ParseObject splits a JSON object into its members. data must be valid JSON
// (as everything out of [Decode] is); the scan checks structure, not the
// spelling of numbers and literals. null and empty input give an empty Object.
// The members' values alias data.
func ParseObject(data []byte) (*Object, error) {
	o := &Object{}
	if err := o.parse(data); err != nil {
		return nil, err
	}
	return o, nil
}

// ParseObjectInto is ParseObject into *o, which it resets: for an Object
// that is part of a larger struct, parsed without an allocation of its
// own. On error *o is left empty.
func ParseObjectInto(o *Object, data []byte) error {
	*o = Object{}
	if err := o.parse(data); err != nil {
		*o = Object{}
		return err
	}
	return nil
}

// parse fills o, which is empty, with data's members.
func (o *Object) parse(data []byte) error {
	o.members = o.inline[:0]
	i := skipWS(data, 0)
	if i == len(data) || string(data[i:]) == "null" {
		return nil
	}
	if data[i] != '{' {
		return errNotObject
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return errNotObject
		}
		end, err := scanString(data, i)
		if err != nil {
			return err
		}
		rawKey := data[i:end]
		key, err := decodeKey(rawKey)
		if err != nil {
			return err
		}
		i = skipWS(data, end)
		if i >= len(data) || data[i] != ':' {
			return errNotObject
		}
		i = skipWS(data, i+1)
		vend, err := scanValue(data, i)
		if err != nil {
			return err
		}
		o.members = append(o.members, member{key: key, rawKey: rawKey, value: data[i:vend]})
		i = skipWS(data, vend)
		if i >= len(data) {
			return errNotObject
		}
		if data[i] == '}' {
			if skipWS(data, i+1) != len(data) {
				return errNotObject
			}
			return nil
		}
		if data[i] != ',' {
			return errNotObject
		}
		i = skipWS(data, i+1)
	}
}

// decodeKey decodes a member name, quotes included. A name of plain
// printable ASCII, without escapes, is its own decoding (and the common
// ones are not even copied); anything else goes through encoding/json.
func decodeKey(rawKey []byte) (string, error) {
	if inner := rawKey[1 : len(rawKey)-1]; isPlain(inner) {
		if s, ok := commonName(inner); ok {
			return s, nil
		}
		return string(inner), nil
	}
	var key string
	if err := json.Unmarshal(rawKey, &key); err != nil {
		return "", err
	}
	return key, nil
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

// Has reports whether key is a member.
func (o *Object) Has(key string) bool {
	for i := range o.members {
		if o.members[i].key == key {
			return true
		}
	}
	return false
}

// Members yields the members in order, duplicates included.
func (o *Object) Members() iter.Seq2[string, json.RawMessage] {
	return func(yield func(string, json.RawMessage) bool) {
		for _, m := range o.members {
			v := m.value
			if m.obj != nil {
				v = m.obj.Bytes()
			}
			if !yield(m.key, v) {
				return
			}
		}
	}
}

// Get returns the raw value of key. With duplicate keys the last wins, as in
// encoding/json.
func (o *Object) Get(key string) (json.RawMessage, bool) {
	for i := len(o.members) - 1; i >= 0; i-- {
		if o.members[i].key == key {
			if c := o.members[i].obj; c != nil {
				return c.Bytes(), true
			}
			return o.members[i].value, true
		}
	}
	return nil, false
}

// Set replaces the value of key where it stands, or appends it.
func (o *Object) Set(key string, value json.RawMessage) {
	o.set(key, value, nil)
}

// SetObject is Set with an object to be encoded by Bytes, and edited in
// place until then: EditObject(key) returns it.
func (o *Object) SetObject(key string, value *Object) {
	o.set(key, nil, value)
}

func (o *Object) set(key string, value json.RawMessage, obj *Object) {
	if i := o.last(key); i >= 0 {
		o.members[i].value, o.members[i].obj = value, obj
		return
	}
	if o.members == nil {
		o.members = o.inline[:0]
	}
	o.members = append(o.members, member{key: key, value: value, obj: obj})
}

// last returns the index of key's member, having dropped its earlier
// duplicates, or -1.
func (o *Object) last(key string) int {
	found := -1
	for i := len(o.members) - 1; i >= 0; i-- {
		if o.members[i].key != key {
			continue
		}
		if found < 0 {
			found = i
			continue
		}
		o.members = append(o.members[:i], o.members[i+1:]...)
		found--
	}
	return found
}

// EditObject returns the value of key, an object, for editing in place:
// later calls of Get and Bytes on o see the edits. The value is parsed on
// the first call (which, like Set, drops key's earlier duplicates); later
// calls return the same *Object. null counts as an empty object, as in
// ParseObject. When key is absent, or its value is not an object, it
// returns false and leaves o as it was.
func (o *Object) EditObject(key string) (*Object, bool) {
	i := -1
	for j := len(o.members) - 1; j >= 0; j-- {
		if o.members[j].key == key {
			i = j
			break
		}
	}
	if i < 0 {
		return nil, false
	}
	if c := o.members[i].obj; c != nil {
		return c, true
	}
	c, err := ParseObject(o.members[i].value)
	if err != nil {
		return nil, false
	}
	i = o.last(key)
	o.members[i].obj = c
	return c, true
}

// Clone returns a copy of o that can be edited without changing o.
func (o *Object) Clone() *Object {
	c := &Object{}
	c.members = append(c.inline[:0], o.members...)
	for i := range c.members {
		if obj := c.members[i].obj; obj != nil {
			c.members[i].obj = obj.Clone()
		}
	}
	return c
}

// Delete removes key and reports whether it was there.
func (o *Object) Delete(key string) bool {
	return o.DeleteFunc(func(k string) bool { return k == key })
}

// DeleteFunc removes every member whose name del reports true for, and
// reports whether there was one.
func (o *Object) DeleteFunc(del func(key string) bool) bool {
	n := len(o.members)
	kept := o.members[:0]
	for _, m := range o.members {
		if !del(m.key) {
			kept = append(kept, m)
		}
	}
	clear(o.members[len(kept):])
	o.members = kept
	return len(kept) != n
}

// Bytes encodes the object: untouched members byte for byte, no whitespace
// between members.
func (o *Object) Bytes() json.RawMessage {
	return o.AppendTo(make([]byte, 0, o.size()))
}

// Verbatim reports whether o, parsed from data and not edited since,
// would encode (Bytes) as data byte for byte: whether data has no
// whitespace outside its members' values. Then data can stand for the
// encoding, which costs no copy.
func (o *Object) Verbatim(data []byte) bool {
	n := 2 + max(len(o.members)-1, 0) // braces and commas
	for _, m := range o.members {
		if m.obj != nil || m.rawKey == nil {
			return false // edited
		}
		n += len(m.rawKey) + 1 + len(m.value)
	}
	return n == len(data)
}

// AppendTo appends what Bytes returns to buf.
func (o *Object) AppendTo(buf []byte) []byte {
	buf = append(buf, '{')
	for i, m := range o.members {
		if i > 0 {
			buf = append(buf, ',')
		}
		if m.rawKey != nil {
			buf = append(buf, m.rawKey...)
		} else {
			buf = AppendString(buf, m.key)
		}
		buf = append(buf, ':')
		if m.obj != nil {
			buf = m.obj.AppendTo(buf)
		} else {
			buf = append(buf, m.value...)
		}
	}
	return append(buf, '}')
}

// size is about the length of o's encoding (more when keys need escapes).
func (o *Object) size() int {
	n := 2
	for _, m := range o.members {
		n += len(m.rawKey) + len(m.key) + len(m.value) + 4
		if m.obj != nil {
			n += m.obj.size()
		}
	}
	return n
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
