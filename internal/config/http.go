package config

import (
	"net/url"
	"strings"
)

// Fields of http and sse servers: where to connect.

// url returns the expanded URL, which must be absolute http or https. Its
// text never goes into an error: it may carry a token.
func (p *parser) url(n *node, at path) (string, error) {
	s, err := p.expanded(n, at)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", p.errorf(n.off, at, "must be an absolute http or https URL")
	}
	return s, nil
}

func (p *parser) headers(n *node, at path) (map[string]string, error) {
	if _, err := p.object(n, at, nil); err != nil {
		return nil, err
	}
	var h map[string]string
	for _, m := range n.members {
		at := at.key(m.key)
		if !isToken(m.key) {
			return nil, p.errorf(m.off, at, "invalid header name")
		}
		for k := range h {
			if strings.EqualFold(k, m.key) {
				return nil, p.errorf(m.off, at, "duplicate header (names are case-insensitive)")
			}
		}
		v, err := p.expanded(m.val, at)
		if err != nil {
			return nil, err
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return nil, p.errorf(m.val.off, at, "must not contain a line break or NUL")
		}
		if h == nil {
			h = make(map[string]string, len(n.members))
		}
		h[m.key] = v
	}
	return h, nil
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2), as a header
// name must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !isWordByte(c) && !strings.ContainsRune("!#$%&'*+.^`|~", rune(c)) {
			return false
		}
	}
	return true
}
