package config

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// HostHTTP is where mcpx serves MCP to hosts over Streamable HTTP (the
// file's mcpx.http block).
type HostHTTP struct {
	// Listen is the daemon's TCP address, as normalised by [ListenAddr],
	// or "" for none (the daemon then serves HTTP hosts on its unix socket
	// only).
	Listen string
	// SessionIdle ends a legacy HTTP session with nothing in flight for
	// this long (the file's sessionIdle; 0: the default, 1h).
	SessionIdle time.Duration
	// MaxSessions bounds the legacy HTTP sessions kept at once (the file's
	// maxSessions; 0: the default, 1000): past it, starting one ends the
	// session unused for the longest.
	MaxSessions int
	// AllowedHosts are the Host header values a replica behind a load
	// balancer answers for beside its own listen address: "name" (any
	// port) or "name:port". Tokens and Origin rules are unchanged.
	AllowedHosts []string
	// PublicURL is the listener's URL as people's browsers reach it (a
	// load balancer's, say), where an upstream's authorization server
	// sends them back after a per-person sign-in; "": http://Listen.
	PublicURL string
}

// ListenAddr checks a TCP listen address, host:port, and returns it
// normalised: an empty host means 127.0.0.1 (loopback unless asked
// otherwise), a host is "localhost" or an IP address (a name resolving
// elsewhere would make the listener's reach unclear), and the port is a
// number from 0 (any free port) to 65535.
func ListenAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("want host:port, e.g. 127.0.0.1:7777")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 || strings.TrimLeft(port, "0123456789") != "" {
		return "", fmt.Errorf("invalid port %q (want 0 to 65535)", port)
	}
	switch {
	case host == "":
		host = "127.0.0.1"
	case strings.EqualFold(host, "localhost"):
		host = "localhost"
	case net.ParseIP(host) == nil:
		return "", fmt.Errorf("invalid host %q (want localhost or an IP address)", host)
	}
	return net.JoinHostPort(host, strconv.Itoa(n)), nil
}

// IsLoopback reports whether a listen address (as [ListenAddr] returns it)
// is reachable from this machine only.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostHTTP reads the mcpx.http block.
func (p *parser) hostHTTP(n *node, at path, h *HostHTTP) error {
	f, err := p.object(n, at, []string{"listen", "allowedHosts", "sessionIdle", "maxSessions", "publicUrl"})
	if err != nil {
		return err
	}
	if v, ok := f["sessionIdle"]; ok {
		if h.SessionIdle, err = p.duration(v, at.key("sessionIdle")); err != nil {
			return err
		}
	}
	if v, ok := f["maxSessions"]; ok {
		if h.MaxSessions, err = p.integer(v, at.key("maxSessions"), 1, 1_000_000); err != nil {
			return err
		}
	}
	if v, ok := f["publicUrl"]; ok {
		if h.PublicURL, err = p.str(v, at.key("publicUrl")); err != nil {
			return err
		}
		u, perr := url.Parse(h.PublicURL)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return p.errorf(v.off, at.key("publicUrl"), "must be an http or https URL with a host and no query")
		}
		h.PublicURL = strings.TrimSuffix(h.PublicURL, "/")
	}
	if v, ok := f["allowedHosts"]; ok {
		if h.AllowedHosts, err = p.allowedHosts(v, at.key("allowedHosts")); err != nil {
			return err
		}
	}
	if v, ok := f["listen"]; ok {
		s, err := p.str(v, at.key("listen"))
		if err != nil {
			return err
		}
		if s == "" {
			return nil // off, as when absent
		}
		if h.Listen, err = ListenAddr(s); err != nil {
			return p.errorf(v.off, at.key("listen"), "%v", err)
		}
	}
	return nil
}
