package config

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Error is a problem with a config file: it cannot be read, it is not JSON,
// or a field is wrong. Its message is one lower-case line, e.g.
//
//	config /home/u/.config/mcpx/config.json: mcpServers.demo.args[1]: must be a string
//	config /x.json:3:14: invalid character '}' looking for beginning of object key string
type Error struct {
	// File is the config file's path, or "" for unnamed input.
	File string
	// Field is the path of the offending field, e.g. "mcpServers.demo.env.TOKEN",
	// or "" when the problem is not one field's (I/O, JSON syntax, top level).
	Field string
	// Line and Col locate the problem in the file, 1-based, Col counting
	// bytes; 0 when unknown. For a field they point at its value (at its key
	// for unknown and duplicate keys). Error prints them only when Field is
	// "", since a field path already says where.
	Line, Col int
	// Msg says what is wrong. It never contains an expanded ${VAR} value.
	Msg string
	// Err is the underlying error, if any (an I/O or *json.SyntaxError).
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config")
	if e.File != "" {
		b.WriteString(" " + e.File)
	}
	if e.Field == "" && e.Line > 0 {
		if e.File != "" {
			fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
		} else {
			fmt.Fprintf(&b, " line %d:%d", e.Line, e.Col)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Reason is the error without the file: the field and what is wrong with
// it, e.g. "mcpServers.x.env.TOKEN: ${TOKEN} is not set".
func (e *Error) Reason() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// Unwrap returns the underlying error, so errors.Is(err, fs.ErrNotExist)
// works on what Load returns.
func (e *Error) Unwrap() error { return e.Err }

// position turns a byte offset in data into a 1-based line and byte column.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	col = off - bytes.LastIndexByte(before, '\n')
	return line, col
}

// path is a field path such as mcpServers.demo.args[1].
type path string

// key returns the path of member k. Keys that are not plain words are quoted
// so that the path stays one unambiguous line: env["A.B"].
func (p path) key(k string) path {
	if !plainKey(k) {
		return path(string(p) + "[" + strconv.Quote(k) + "]")
	}
	if p == "" {
		return path(k)
	}
	return path(string(p) + "." + k)
}

// index returns the path of element i.
func (p path) index(i int) path { return path(string(p) + "[" + strconv.Itoa(i) + "]") }

func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range []byte(k) {
		if !isWordByte(c) && c != '$' {
			return false
		}
	}
	return true
}

// isWordByte reports whether c is in [A-Za-z0-9_-].
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}
