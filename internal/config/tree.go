package config

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// A node is one JSON value with its byte offset in the file. Objects keep
// their members in file order, duplicates included, so that validation can
// report the first problem in the file and name duplicate keys.
type node struct {
	kind    kind
	off     int
	text    string // a string's value, a number's literal
	boolean bool
	members []member
	elems   []*node
}

type member struct {
	key string
	off int // of the key
	val *node
}

type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// readTree parses data, which must already be known to be valid JSON.
func readTree(data []byte) (*node, error) {
	r := treeReader{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	r.dec.UseNumber()
	return r.value()
}

type treeReader struct {
	dec  *json.Decoder
	data []byte
}

// start returns the offset of the next token: the decoder's offset is the
// end of the previous token, before any separator.
func (r *treeReader) start() int {
	off := int(r.dec.InputOffset())
	for off < len(r.data) {
		switch r.data[off] {
		case ' ', '\t', '\n', '\r', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

func (r *treeReader) value() (*node, error) {
	n := &node{off: r.start()}
	tok, err := r.dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		n.kind = kindNull
	case bool:
		n.kind, n.boolean = kindBool, t
	case json.Number:
		n.kind, n.text = kindNumber, string(t)
	case string:
		n.kind, n.text = kindString, t
	case json.Delim:
		switch t {
		case '{':
			n.kind = kindObject
			for r.dec.More() {
				off := r.start()
				tok, err := r.dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := tok.(string)
				if !ok {
					return nil, fmt.Errorf("reading object key: unexpected %v", tok)
				}
				v, err := r.value()
				if err != nil {
					return nil, err
				}
				n.members = append(n.members, member{key: key, off: off, val: v})
			}
		case '[':
			n.kind = kindArray
			for r.dec.More() {
				v, err := r.value()
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, v)
			}
		default:
			return nil, fmt.Errorf("reading value: unexpected %v", t)
		}
		if _, err := r.dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
	}
	return n, nil
}
