package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LoadOptions adjusts [Load] and [Parse]. A nil *LoadOptions means defaults.
//
// Server fields command, args, env values, cwd, url and headers values may
// refer to environment variables, typically for secrets:
//
//	${NAME}           the value of NAME; an error when NAME is unset
//	${NAME:-default}  the value of NAME, or default when NAME is unset or
//	                  empty; default is literal text up to the first "}"
//	$${               a literal "${"
//
// A "$" not followed by "{" stays as it is, and expanded values are not
// expanded again. Names, keys and settings are never expanded.
type LoadOptions struct {
	// Lookup returns an environment variable's value for ${VAR}
	// expansion, and whether it is set. Nil means os.LookupEnv.
	Lookup func(name string) (string, bool)
	// PerServer confines a server's own mistake (an unset ${VAR}, a bad
	// field of its own, a bad name) to that server: it is left out of
	// Config.Servers and kept, with its error, in Config.Unconfigured, and
	// the rest of the file still loads. Without it, such a mistake fails
	// the whole file. Mistakes outside mcpServers' entries always do.
	PerServer bool
}

// Load reads and validates the config file at path. A file that cannot be
// read yields an *Error that unwraps to the I/O error, so
// errors.Is(err, fs.ErrNotExist) tells a missing file (use [Default]) from a
// broken one.
func Load(path string, opts *LoadOptions) (*Config, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	data, err := os.ReadFile(path)
	if err != nil {
		msg := err.Error()
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			msg = pe.Err.Error() // the path is already in the message
		}
		return nil, &Error{File: path, Msg: msg, Err: err}
	}
	return Parse(data, path, opts)
}

// Parse validates the contents of a config file. file names it in errors
// and anchors relative cwd values; it is made absolute and becomes
// Config.File. It may be "" for unnamed input, whose relative cwd values are
// resolved against the current directory.
func Parse(data []byte, file string, opts *LoadOptions) (*Config, error) {
	if file != "" {
		if abs, err := filepath.Abs(file); err == nil {
			file = abs
		}
	}
	p := &parser{file: file, data: bytes.TrimPrefix(data, []byte("\uFEFF")), lookup: os.LookupEnv}
	if opts != nil && opts.Lookup != nil {
		p.lookup = opts.Lookup
	}
	if opts != nil {
		p.perServer = opts.PerServer
	}
	root, err := p.tree()
	if err != nil {
		return nil, err
	}
	c, err := p.config(root)
	if err != nil {
		return nil, err
	}
	c.File = file
	return c, nil
}

// tree checks that the data is JSON and returns it as a tree.
func (p *parser) tree() (*node, error) {
	if len(bytes.TrimSpace(p.data)) == 0 {
		return nil, &Error{File: p.file, Msg: "file is empty (want a JSON object)"}
	}
	var raw json.RawMessage // Unmarshal checks the whole input first
	if err := json.Unmarshal(p.data, &raw); err != nil {
		var se *json.SyntaxError
		if !errors.As(err, &se) {
			return nil, &Error{File: p.file, Msg: err.Error(), Err: err}
		}
		// Offset counts the bytes read, the offending one included.
		off := int(se.Offset)
		if strings.HasPrefix(se.Error(), "invalid character") {
			off--
		}
		line, col := position(p.data, off)
		return nil, &Error{File: p.file, Line: line, Col: col, Msg: se.Error(), Err: se}
	}
	root, err := readTree(p.data)
	if err != nil {
		return nil, &Error{File: p.file, Msg: "reading json: " + err.Error(), Err: err}
	}
	return root, nil
}

// config validates the whole file, filling in defaults.
func (p *parser) config(root *node) (*Config, error) {
	if root.kind != kindObject {
		line, col := position(p.data, root.off)
		return nil, &Error{File: p.file, Line: line, Col: col, Msg: "must be a JSON object at the top level"}
	}
	top, err := p.object(root, "", []string{"$schema", "mcpServers", "mcpx"})
	if err != nil {
		return nil, err
	}
	c := defaults()
	if n, ok := top["mcpx"]; ok { // first: servers inherit its settings
		if err := p.settings(n, "mcpx", c); err != nil {
			return nil, err
		}
	}
	if n, ok := top["mcpServers"]; ok {
		if _, err := p.object(n, "mcpServers", nil); err != nil {
			return nil, err
		}
		for _, m := range n.members {
			s, err := p.server(m.key, m.off, m.val, path("mcpServers").key(m.key), c)
			var fe *Error
			if err != nil && p.perServer && errors.As(err, &fe) {
				if c.Unconfigured == nil {
					c.Unconfigured = map[string]*Error{}
				}
				c.Unconfigured[m.key] = fe
				continue
			}
			if err != nil {
				return nil, err
			}
			c.Servers[s.Name] = s
		}
	}
	return c, nil
}
