package config

import (
	"net"
	"net/url"
	"strings"
)

// store reads "store": a postgres:// (or postgresql://) URL with a host.
// The URL is never quoted in an error: it may carry a password.
func (p *parser) store(n *node, at path) (string, error) {
	s, err := p.expanded(n, at)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", nil // the embedded store, as when absent
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return "", p.errorf(n.off, at, "must be a PostgreSQL URL, postgres://user:password@host:port/database")
	}
	return s, nil
}

// allowedHosts reads "allowedHosts": an array of "name" or "name:port",
// names without a scheme, path or user.
func (p *parser) allowedHosts(n *node, at path) ([]string, error) {
	if n.kind != kindArray {
		return nil, p.errorf(n.off, at, "must be an array of host names (\"gateway.example.com\" or \"gateway.example.com:8443\")")
	}
	var out []string
	for i, e := range n.elems {
		at := at.index(i)
		s, err := p.str(e, at)
		if err != nil {
			return nil, err
		}
		if !validHostEntry(s) {
			return nil, p.errorf(e.off, at, "must be a host name or IP, with an optional :port (no scheme, path or user)")
		}
		out = append(out, strings.ToLower(s))
	}
	return out, nil
}

func validHostEntry(s string) bool {
	if s == "" || strings.ContainsAny(s, "/@?# \t") {
		return false
	}
	host := s
	if h, port, err := net.SplitHostPort(s); err == nil {
		if port == "" || strings.Trim(port, "0123456789") != "" {
			return false
		}
		host = h
	} else if strings.Count(s, ":") == 1 {
		return false // "name:" or "name:x"
	}
	return strings.Trim(host, "[]") != ""
}
