package config

import (
	"path/filepath"
	"strings"
)

// Fields of stdio servers: the child process to run.

func (p *parser) command(n *node, at path) (string, error) {
	s, err := p.arg(n, at)
	if err == nil && s == "" {
		return "", p.errorf(n.off, at, "must not be empty")
	}
	return s, err
}

// arg returns an expanded string that can be passed to exec: no NUL bytes.
func (p *parser) arg(n *node, at path) (string, error) {
	s, err := p.expanded(n, at)
	if err == nil && strings.IndexByte(s, 0) >= 0 {
		return "", p.errorf(n.off, at, "must not contain a NUL byte")
	}
	return s, err
}

func (p *parser) args(n *node, at path) ([]string, error) {
	if n.kind != kindArray {
		return nil, p.errorf(n.off, at, "must be an array of strings")
	}
	var args []string
	for i, e := range n.elems {
		a, err := p.arg(e, at.index(i))
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	return args, nil
}

func (p *parser) env(n *node, at path) (map[string]string, error) {
	if _, err := p.object(n, at, nil); err != nil {
		return nil, err
	}
	var env map[string]string
	for _, m := range n.members {
		at := at.key(m.key)
		if m.key == "" || strings.ContainsAny(m.key, "=\x00") {
			return nil, p.errorf(m.off, at, `invalid variable name (must be non-empty, without "=" or NUL)`)
		}
		v, err := p.arg(m.val, at)
		if err != nil {
			return nil, err
		}
		if env == nil {
			env = make(map[string]string, len(n.members))
		}
		env[m.key] = v
	}
	return env, nil
}

// cwd returns the expanded directory, made absolute against the config
// file's directory (the current directory for unnamed input).
func (p *parser) cwd(n *node, at path) (string, error) {
	dir, err := p.arg(n, at)
	if err != nil {
		return "", err
	}
	if dir == "" {
		return "", p.errorf(n.off, at, "must not be empty")
	}
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir), nil
	}
	if p.file != "" {
		return filepath.Join(filepath.Dir(p.file), dir), nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", p.errorf(n.off, at, "cannot resolve a relative directory: %v", err)
	}
	return abs, nil
}
