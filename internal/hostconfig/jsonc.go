package hostconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Host config files are JSON, some of them JSON with comments and
// trailing commas (VS Code's, opencode's, Gemini CLI's). They are read in
// two steps that keep every byte offset of the original: standardize
// blanks out comments and trailing commas (same length, so offsets stay
// valid), then parseJSON reads the result into nodes that know where
// they are. Edits are made on the original bytes at those offsets.

// standardize returns data with its comments and trailing commas replaced
// by spaces (newlines kept), and whether there were any. It fails on an
// unterminated string or comment.
func standardize(data []byte) ([]byte, bool, error) {
	out := bytes.Clone(data)
	changed := false
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if out[i] != '\n' && out[i] != '\r' {
				out[i] = ' '
			}
		}
		changed = true
	}
	lastComma := -1 // a comma not yet followed by a value
	for i := 0; i < len(out); i++ {
		switch c := out[i]; {
		case c == '"':
			j := i + 1
			for ; j < len(out) && out[j] != '"'; j++ {
				if out[j] == '\\' {
					j++
				}
			}
			if j >= len(out) {
				return nil, false, fmt.Errorf("unterminated string at %s", lineCol(data, i))
			}
			i, lastComma = j, -1
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			j := bytes.IndexByte(out[i:], '\n')
			if j < 0 {
				j = len(out) - i
			}
			blank(i, i+j)
			i += j - 1
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			j := bytes.Index(out[i+2:], []byte("*/"))
			if j < 0 {
				return nil, false, fmt.Errorf("unterminated comment at %s", lineCol(data, i))
			}
			blank(i, i+2+j+2)
			i += 2 + j + 1
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				blank(lastComma, lastComma+1)
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			lastComma = -1
		}
	}
	return out, changed, nil
}

// lineCol names offset off of data as "line L, column C".
func lineCol(data []byte, off int) string {
	off = min(off, len(data))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// A node is one JSON value and where it is in the file.
type node struct {
	kind       byte // '{', '[', '"', 'n' (number), 't' (true/false), '0' (null)
	start, end int  // the value's bytes: data[start:end]
	members    []member
	elems      []*node
}

type member struct {
	key      string
	keyStart int
	val      *node
}

// get returns the last member named key (as JSON.parse keeps the last of
// duplicates) and how many there are.
func (n *node) get(key string) (*node, int) {
	var v *node
	count := 0
	for _, m := range n.members {
		if m.key == key {
			v, count = m.val, count+1
		}
	}
	return v, count
}

// parseJSON parses standardized JSON into nodes. The whole input must be
// one value.
func parseJSON(clean []byte) (*node, error) {
	var raw json.RawMessage
	if err := json.Unmarshal(clean, &raw); err != nil {
		var se *json.SyntaxError
		if ok := asSyntax(err, &se); ok {
			return nil, fmt.Errorf("%s: %v", lineCol(clean, int(se.Offset)-1), se)
		}
		return nil, err
	}
	p := &jparser{data: clean}
	return p.value()
}

func asSyntax(err error, se **json.SyntaxError) bool {
	s, ok := err.(*json.SyntaxError)
	if ok {
		*se = s
	}
	return ok
}

type jparser struct {
	data []byte
	i    int
}

func (p *jparser) ws() {
	for p.i < len(p.data) && strings.IndexByte(" \t\r\n", p.data[p.i]) >= 0 {
		p.i++
	}
}

// value reads one value; the input is known to be valid JSON.
func (p *jparser) value() (*node, error) {
	p.ws()
	n := &node{start: p.i}
	if p.i >= len(p.data) {
		return nil, fmt.Errorf("unexpected end of input")
	}
	switch c := p.data[p.i]; c {
	case '{':
		n.kind = '{'
		p.i++
		for {
			p.ws()
			if p.data[p.i] == '}' {
				p.i++
				break
			}
			if p.data[p.i] == ',' {
				p.i++
				continue
			}
			ks := p.i
			kn, err := p.value()
			if err != nil {
				return nil, err
			}
			var key string
			if err := json.Unmarshal(p.data[kn.start:kn.end], &key); err != nil {
				return nil, err
			}
			p.ws()
			p.i++ // ':'
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, member{key: key, keyStart: ks, val: v})
		}
	case '[':
		n.kind = '['
		p.i++
		for {
			p.ws()
			if p.data[p.i] == ']' {
				p.i++
				break
			}
			if p.data[p.i] == ',' {
				p.i++
				continue
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
		}
	case '"':
		n.kind = '"'
		p.i++
		for p.data[p.i] != '"' {
			if p.data[p.i] == '\\' {
				p.i++
			}
			p.i++
		}
		p.i++
	default:
		switch {
		case c == 't' || c == 'f':
			n.kind = 't'
		case c == 'n':
			n.kind = '0'
		default:
			n.kind = 'n'
		}
		for p.i < len(p.data) && strings.IndexByte(",]} \t\r\n", p.data[p.i]) < 0 {
			p.i++
		}
	}
	n.end = p.i
	return n, nil
}

// doc is a host's JSON file, read.
type doc struct {
	orig  []byte // as on disk
	clean []byte // standardized
	jsonc bool   // it had comments or trailing commas
	root  *node
}

func readDoc(data []byte) (*doc, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	clean, jsonc, err := standardize(data)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(clean)) == 0 {
		return nil, fmt.Errorf("the file is empty")
	}
	root, err := parseJSON(clean)
	if err != nil {
		return nil, err
	}
	return &doc{orig: data, clean: clean, jsonc: jsonc, root: root}, nil
}

// decode unmarshals n's value into v.
func (d *doc) decode(n *node, v any) error {
	return json.Unmarshal(d.clean[n.start:n.end], v)
}
