package hostconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// EditTOML is EditJSON for Codex's config.toml: each server is a
// [mcp_servers.NAME] table (with its [mcp_servers.NAME.*] subtables).
// A removed server's tables are cut out; a set server's are replaced or
// added at the end of the file. Servers written any other way (inline
// tables, dotted keys) cannot be edited so; the read-back check refuses
// such an edit rather than guess.
func EditTOML(data []byte, set []Member, remove []string) ([]byte, error) {
	out := bytes.Clone(data)
	for _, m := range set {
		remove = append(remove, m.Name)
	}
	for _, name := range remove {
		out = cutTables(out, name)
	}
	for _, m := range set {
		text, err := tomlTable(m)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		if len(bytes.TrimSpace(out)) > 0 && !bytes.HasSuffix(out, []byte("\n\n")) {
			out = append(out, '\n')
		}
		out = append(out, text...)
	}
	if err := checkTOMLEdit(data, out, set, remove); err != nil {
		return nil, err
	}
	return out, nil
}

var tomlHeader = lazyRegexp(`^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(#.*)?$`)

// cutTables removes the lines of [mcp_servers.NAME] and its subtables,
// each up to the next table header.
func cutTables(data []byte, name string) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	var out, pending []byte // pending: blank and comment lines while cutting
	cutting := false
	for _, l := range lines {
		if m := tomlHeader().FindSubmatch(bytes.TrimRight(l, "\r\n")); m != nil {
			was := cutting
			cutting = isServerTable(string(m[1]), name)
			if was {
				// Comments just above the next table are that table's;
				// the blank line before the cut table still parts them.
				out, pending = append(out, bytes.TrimLeft(pending, " \t\r\n")...), nil
			}
		}
		switch t := bytes.TrimSpace(l); {
		case !cutting:
			out = append(out, l...)
		case len(t) == 0 || t[0] == '#':
			pending = append(pending, l...)
		default:
			pending = nil
		}
	}
	return out
}

// isServerTable reports whether a header's key names mcp_servers.NAME or
// a subtable of it.
func isServerTable(key, name string) bool {
	parts := splitDotted(key)
	return len(parts) >= 2 && parts[0] == "mcp_servers" && parts[1] == name
}

// splitDotted splits a TOML dotted key into its parts, unquoting quoted
// ones.
func splitDotted(key string) []string {
	var parts []string
	for key = strings.TrimSpace(key); key != ""; {
		var part string
		switch key[0] {
		case '"':
			end := strings.IndexByte(key[1:], '"')
			if end < 0 {
				return nil
			}
			part, key = key[1:1+end], key[2+end:]
		case '\'':
			end := strings.IndexByte(key[1:], '\'')
			if end < 0 {
				return nil
			}
			part, key = key[1:1+end], key[2+end:]
		default:
			end := strings.IndexByte(key, '.')
			if end < 0 {
				end = len(key)
			}
			part, key = strings.TrimSpace(key[:end]), key[end:]
		}
		parts = append(parts, part)
		key = strings.TrimSpace(key)
		key = strings.TrimPrefix(key, ".")
		key = strings.TrimSpace(key)
	}
	return parts
}

var bareKey = lazyRegexp(`^[A-Za-z0-9_-]+$`)

func tomlKey(k string) string {
	if bareKey().MatchString(k) {
		return k
	}
	return quote(k)
}

// tomlTable renders m as a [mcp_servers.NAME] table: strings, arrays of
// strings and tables of strings (inline), in the JSON's member order.
func tomlTable(m Member) ([]byte, error) {
	d, err := readDoc(m.Value)
	if err != nil || d.root.kind != '{' {
		return nil, fmt.Errorf("server %q: want a JSON object", m.Name)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "[mcp_servers.%s]\n", tomlKey(m.Name))
	for _, f := range d.root.members {
		var v any
		if err := d.decode(f.val, &v); err != nil {
			return nil, err
		}
		s, err := tomlValue(v)
		if err != nil {
			return nil, fmt.Errorf("server %q: %s: %v", m.Name, f.key, err)
		}
		fmt.Fprintf(&b, "%s = %s\n", tomlKey(f.key), s)
	}
	return b.Bytes(), nil
}

func tomlValue(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return quote(x), nil
	case bool:
		return fmt.Sprint(x), nil
	case float64:
		return fmt.Sprint(x), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, err := tomlValue(e)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			s, err := tomlValue(x[k])
			if err != nil {
				return "", err
			}
			parts[i] = tomlKey(k) + " = " + s
		}
		return "{ " + strings.Join(parts, ", ") + " }", nil
	}
	return "", fmt.Errorf("cannot write %T in TOML", v)
}

// checkTOMLEdit checks that after reads as before with exactly the
// intended change.
func checkTOMLEdit(before, after []byte, set []Member, remove []string) error {
	want := map[string]any{}
	if err := toml.Unmarshal(before, &want); err != nil {
		return err
	}
	got := map[string]any{}
	if err := toml.Unmarshal(after, &got); err != nil {
		return fmt.Errorf("the edited file does not read back (%v): mcpx edits only servers written as [mcp_servers.NAME] tables; the file is left as it was", err)
	}
	list, _ := want["mcp_servers"].(map[string]any)
	if list == nil {
		list = map[string]any{}
	}
	for _, name := range remove {
		delete(list, name)
	}
	for _, m := range set {
		text, err := tomlTable(m)
		if err != nil {
			return err
		}
		one := map[string]any{}
		if err := toml.Unmarshal(text, &one); err != nil {
			return err
		}
		list[m.Name] = one["mcp_servers"].(map[string]any)[m.Name]
	}
	if len(list) > 0 || want["mcp_servers"] != nil {
		want["mcp_servers"] = list
	}
	if _, ok := got["mcp_servers"]; !ok && len(list) == 0 {
		delete(want, "mcp_servers")
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Errorf("the edit did not read back as intended: mcpx edits only servers written as [mcp_servers.NAME] tables, not inline tables or dotted keys; the file is left as it was")
	}
	return nil
}

func tomlUnmarshal(data []byte, v any) error { return toml.Unmarshal(data, v) }

// jsonValue is for tests and callers that build a Member from a Go value.
func jsonValue(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
