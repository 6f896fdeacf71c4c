package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// parser turns a tree into a Config. Each method checks one kind of field
// and reports the first problem as an *Error at the field's path.
type parser struct {
	file   string // for errors; its directory anchors relative cwd values
	data   []byte // for error positions
	lookup func(string) (string, bool)
	// perServer: LoadOptions.PerServer.
	perServer bool
}

func (p *parser) errorf(off int, at path, format string, args ...any) *Error {
	line, col := position(p.data, off)
	return &Error{File: p.file, Field: string(at), Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// object checks that n is an object with unique keys, all in known (any key
// when known is nil), and returns its values by key.
func (p *parser) object(n *node, at path, known []string) (map[string]*node, error) {
	if n.kind != kindObject {
		return nil, p.errorf(n.off, at, "must be an object")
	}
	vals := make(map[string]*node, len(n.members))
	for _, m := range n.members {
		if _, dup := vals[m.key]; dup {
			return nil, p.errorf(m.off, at.key(m.key), "duplicate key")
		}
		if known != nil && !slices.Contains(known, m.key) {
			return nil, p.errorf(m.off, at.key(m.key), "unknown field%s", suggest(m.key, known))
		}
		vals[m.key] = m.val
	}
	return vals, nil
}

func (p *parser) str(n *node, at path) (string, error) {
	if n.kind != kindString {
		return "", p.errorf(n.off, at, "must be a string")
	}
	return n.text, nil
}

// expanded returns the string n with its ${VAR} references expanded.
func (p *parser) expanded(n *node, at path) (string, error) {
	s, err := p.str(n, at)
	if err != nil {
		return "", err
	}
	s, err = expand(s, p.lookup)
	if err != nil {
		return "", p.errorf(n.off, at, "%v", err) // expand's errors hold no values
	}
	return s, nil
}

func (p *parser) boolean(n *node, at path) (bool, error) {
	if n.kind != kindBool {
		return false, p.errorf(n.off, at, "must be true or false")
	}
	return n.boolean, nil
}

// integer returns the number n, which must be a whole number in [lo, hi].
func (p *parser) integer(n *node, at path, lo, hi int) (int, error) {
	if n.kind == kindNumber {
		f, err := strconv.ParseFloat(n.text, 64)
		if err == nil && f == math.Trunc(f) && f >= float64(lo) && f <= float64(hi) {
			return int(f), nil
		}
	}
	return 0, p.errorf(n.off, at, "must be an integer between %d and %d", lo, hi)
}

// suggest returns a hint naming the known field closest to key, if any is
// close enough to be a likely typo.
func suggest(key string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if d := distance(strings.ToLower(key), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best == "" || bestDist >= len(key) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
