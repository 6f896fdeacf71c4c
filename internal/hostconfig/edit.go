package hostconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Member is one server to write into a host's list: its name and its
// value, as compact JSON (for Codex, the JSON is turned into TOML).
type Member struct {
	Name  string
	Value json.RawMessage
}

// EditJSON returns data with the server list at top-level member key
// changed: each of remove deleted, each of set added or replaced. Bytes
// outside the members it touches stay as they were, comments included; a
// missing or empty file becomes a new one. The result is read back and
// must equal the original with exactly those changes.
func EditJSON(data []byte, key string, set []Member, remove []string) ([]byte, error) {
	return editJSONFile(data, key, set, remove, false)
}

// AppendJSON is EditJSON that puts the servers it adds after the list's
// own, in the order of set (EditJSON puts each first): for a list a
// person reads top to bottom, as mcpx's own config.
func AppendJSON(data []byte, key string, set []Member) ([]byte, error) {
	return editJSONFile(data, key, set, nil, true)
}

func editJSONFile(data []byte, key string, set []Member, remove []string, atEnd bool) ([]byte, error) {
	bom := bytes.HasPrefix(data, []byte("\uFEFF"))
	body := bytes.TrimPrefix(data, []byte("\uFEFF"))
	var out []byte
	var err error
	if len(bytes.TrimSpace(body)) == 0 {
		out, err = newJSONFile(key, set)
	} else {
		out, err = editJSON(body, key, set, remove, atEnd)
	}
	if err != nil {
		return nil, err
	}
	if err := checkJSONEdit(body, out, key, set, remove); err != nil {
		return nil, err
	}
	if bom {
		out = append([]byte("\uFEFF"), out...)
	}
	return out, nil
}

func newJSONFile(key string, set []Member) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\n  " + quote(key) + ": {")
	for i, m := range set {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    " + quote(m.Name) + ": ")
		if err := json.Indent(&b, m.Value, "    ", "  "); err != nil {
			return nil, err
		}
	}
	b.WriteString("\n  }\n}\n")
	return b.Bytes(), nil
}

func editJSON(body []byte, key string, set []Member, remove []string, atEnd bool) ([]byte, error) {
	out := bytes.Clone(body)
	for _, name := range remove {
		for {
			d, list, err := serverList(out, key)
			if err != nil {
				return nil, err
			}
			if list == nil {
				break
			}
			i := slices.IndexFunc(list.members, func(m member) bool { return m.key == name })
			if i < 0 {
				break
			}
			out = removeMember(d, list, i)
		}
	}
	for _, m := range set {
		d, list, err := serverList(out, key)
		if err != nil {
			return nil, err
		}
		if list == nil {
			value := []byte("{" + quote(m.Name) + ":" + string(m.Value) + "}")
			out = setMember(d, d.root, key, value, false)
			continue
		}
		out = setMember(d, list, m.Name, m.Value, atEnd)
	}
	return out, nil
}

// serverList reads data and returns its top-level object key, nil if it
// has none.
func serverList(data []byte, key string) (*doc, *node, error) {
	d, err := readDoc(data)
	if err != nil {
		return nil, nil, err
	}
	if d.root.kind != '{' {
		return nil, nil, fmt.Errorf("the file does not hold a JSON object")
	}
	n, count := d.root.get(key)
	switch {
	case count > 1:
		return nil, nil, fmt.Errorf("%q appears %d times; the host would read only the last: fix the file first", key, count)
	case n != nil && n.kind != '{':
		return nil, nil, fmt.Errorf("%q is not a JSON object", key)
	}
	if n != nil {
		for _, m := range n.members {
			if _, c := n.get(m.key); c > 1 {
				return nil, nil, fmt.Errorf("server %q appears %d times in %q; fix the file first", m.key, c, key)
			}
		}
	}
	return d, n, nil
}

// setMember replaces obj's member name's value with value, or adds the
// member first in obj, indented as its siblings are.
func setMember(d *doc, obj *node, name string, value []byte, atEnd bool) []byte {
	indent, unit := d.indents(obj)
	var v bytes.Buffer
	if err := json.Indent(&v, value, indent, unit); err != nil {
		v.Reset()
		v.Write(value)
	}
	if old, _ := obj.get(name); old != nil {
		return splice(d.orig, old.start, old.end, v.Bytes())
	}
	text := "\n" + indent + quote(name) + ": " + v.String()
	if n := len(obj.members); n > 0 && atEnd {
		end := obj.members[n-1].val.end
		return splice(d.orig, end, end, []byte(","+text))
	}
	if len(obj.members) > 0 {
		text += ","
	} else {
		close := obj.end - 1
		outer := strings.TrimSuffix(indent, unit)
		return splice(d.orig, close, close, []byte(text+"\n"+outer))
	}
	return splice(d.orig, obj.start+1, obj.start+1, []byte(text))
}

// removeMember deletes obj's i-th member with its comma, and its line
// when the member had the line to itself.
func removeMember(d *doc, obj *node, i int) []byte {
	m := obj.members[i]
	start, end := m.keyStart, m.val.end
	lineStart := start
	for lineStart > 0 && (d.clean[lineStart-1] == ' ' || d.clean[lineStart-1] == '\t') {
		lineStart--
	}
	ownLine := lineStart == 0 || d.clean[lineStart-1] == '\n'
	if ownLine {
		lineStart = d.commentsAbove(lineStart)
	}
	e := end
	for e < len(d.clean) && (d.clean[e] == ' ' || d.clean[e] == '\t' || d.clean[e] == '\r') {
		e++
	}
	if e < len(d.orig) && d.orig[e] == ',' {
		end = e + 1
	} else if i > 0 {
		// The last member: the comma before it goes instead.
		p := start - 1
		for p > 0 && strings.IndexByte(" \t\r\n", d.clean[p]) >= 0 {
			p--
		}
		if d.orig[p] == ',' {
			if ownLine && lineStart > 0 {
				start = lineStart - 1 // the line break before it, not after
				if start > 0 && d.orig[start-1] == '\r' {
					start--
				}
			}
			out := splice(d.orig, start, end, nil)
			return splice(out, p, p+1, nil)
		}
	}
	if ownLine {
		e := end
		for e < len(d.clean) && (d.clean[e] == ' ' || d.clean[e] == '\t' || d.clean[e] == '\r') {
			e++
		}
		if e < len(d.clean) && d.clean[e] == '\n' {
			start, end = lineStart, e+1
		}
	}
	return splice(d.orig, start, end, nil)
}

// commentsAbove returns the start of the comment-only lines just above
// the line at off (the member's own comments), or off if there are none.
func (d *doc) commentsAbove(off int) int {
	for off > 0 {
		prev := bytes.LastIndexByte(d.clean[:off-1], '\n') + 1
		line := d.orig[prev : off-1]
		if len(bytes.TrimSpace(d.clean[prev:off-1])) != 0 || len(bytes.TrimSpace(line)) == 0 {
			return off
		}
		off = prev
	}
	return off
}

// indents returns the indentation of obj's members and one level's unit.
func (d *doc) indents(obj *node) (indent, unit string) {
	lead := func(off int) (string, bool) {
		i := off
		for i > 0 && (d.clean[i-1] == ' ' || d.clean[i-1] == '\t') {
			i--
		}
		if i > 0 && d.clean[i-1] != '\n' {
			return "", false
		}
		return string(d.orig[i:off]), true
	}
	unit = "  "
	if len(d.root.members) > 0 {
		if l, ok := lead(d.root.members[0].keyStart); ok && l != "" {
			unit = l
		}
	}
	if len(obj.members) > 0 {
		if l, ok := lead(obj.members[0].keyStart); ok {
			return l, unit
		}
	}
	outer, _ := lead(obj.start)
	if obj != d.root {
		// obj is a member's value: its line's indentation is the member's.
		i := obj.start
		for i > 0 && d.clean[i-1] != '\n' {
			i--
		}
		j := i
		for j < len(d.clean) && (d.clean[j] == ' ' || d.clean[j] == '\t') {
			j++
		}
		outer = string(d.orig[i:j])
	}
	return outer + unit, unit
}

func splice(b []byte, start, end int, text []byte) []byte {
	out := make([]byte, 0, len(b)-(end-start)+len(text))
	out = append(out, b[:start]...)
	out = append(out, text...)
	return append(out, b[end:]...)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// checkJSONEdit reads before and after as the host would and checks that
// they differ by exactly the intended change.
func checkJSONEdit(before, after []byte, key string, set []Member, remove []string) error {
	decode := func(b []byte) (map[string]any, error) {
		m := map[string]any{}
		if len(bytes.TrimSpace(b)) == 0 {
			return m, nil
		}
		clean, _, err := standardize(b)
		if err != nil {
			return nil, err
		}
		return m, json.Unmarshal(clean, &m)
	}
	want, err := decode(before)
	if err != nil {
		return err
	}
	got, err := decode(after)
	if err != nil {
		return fmt.Errorf("the edited file does not read back: %v", err)
	}
	list, _ := want[key].(map[string]any)
	if list == nil {
		list = map[string]any{}
	}
	for _, name := range remove {
		delete(list, name)
	}
	for _, m := range set {
		var v any
		if err := json.Unmarshal(m.Value, &v); err != nil {
			return err
		}
		list[m.Name] = v
	}
	want[key] = list
	if !reflect.DeepEqual(want, got) {
		return fmt.Errorf("the edit did not read back as intended; the file is left as it was")
	}
	return nil
}
