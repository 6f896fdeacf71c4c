package hostserver

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"

	"mcpx/internal/jsonrpc"
)

// Access says who may use the HTTP face through one listener.
type Access struct {
	// Addr is the address a TCP listener is bound to (host:port, the real
	// port when 0 was asked for). "" means the daemon's unix socket, which
	// is mode 0600 and checks its peers: no Host or token check there, and
	// no browser (Origin or Referer) either.
	Addr string
	// Token, if not "", is the bearer token each request must present as
	// "Authorization: Bearer <token>". Compared in constant time.
	Token string
}

// Handler returns the MCP endpoint for one listener: a's checks, then the
// protocol. Mount it at /mcp.
func (h *HTTP) Handler(a Access) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status, msg := a.check(r); status != 0 {
			if status == http.StatusUnauthorized {
				v := `Bearer realm="mcpx"`
				if r.Header.Get("Authorization") != "" {
					v += `, error="invalid_token"`
				}
				w.Header().Set("WWW-Authenticate", v)
			}
			httpError(w, status, jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "%s", msg))
			return
		}
		h.serve(w, r)
	})
}

// check returns the status and reason a request is refused with, or 0.
// The order matters: a foreign Host or Origin is a 403 whether or not the
// request carries the token (DNS rebinding protection must not depend on
// a secret the attacker lacks anyway, and conformance suites test it
// without one).
func (a Access) check(r *http.Request) (int, string) {
	if a.Addr == "" {
		if r.Header.Get("Origin") != "" || r.Header.Get("Referer") != "" {
			return http.StatusForbidden, "forbidden: the unix socket serves no browser"
		}
		return 0, ""
	}
	if !a.hostAllowed(r.Host) {
		return http.StatusForbidden, "forbidden: Host " + quote(r.Host) + " is not this server's address (DNS rebinding protection)"
	}
	if o := r.Header.Get("Origin"); o != "" && !originAllowed(o, r.Host) {
		return http.StatusForbidden, "forbidden: Origin " + quote(o) + " may not use this server"
	}
	if a.Token != "" && !bearerMatches(r.Header.Get("Authorization"), a.Token) {
		return http.StatusUnauthorized, "unauthorized: send Authorization: Bearer <token> (`mcpx token` prints it)"
	}
	return 0, ""
}

// hostAllowed reports whether a Host header names this listener: its port,
// and localhost, a loopback IP, the listen host itself, or, for a listener
// on every interface, any IP literal. A DNS name other than localhost is
// what a DNS rebinding attack sends, and is refused.
func (a Access) hostAllowed(host string) bool {
	lh, lp, err := net.SplitHostPort(a.Addr)
	if err != nil {
		return false
	}
	hh, hp, err := net.SplitHostPort(host)
	if err != nil {
		// No port: only for a listener on port 80.
		hh, hp = strings.Trim(host, "[]"), "80"
	}
	if hp != lp || hh == "" {
		return false
	}
	if strings.EqualFold(hh, "localhost") || strings.EqualFold(hh, lh) {
		return true
	}
	ip := net.ParseIP(hh)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	if lip := net.ParseIP(lh); lip != nil {
		return lip.IsUnspecified() || lip.Equal(ip)
	}
	return false
}

// originAllowed reports whether a browser origin may call: a page on this
// machine (localhost or a loopback IP, any port), or the server's own
// origin.
func originAllowed(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	name := u.Hostname()
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

func bearerMatches(header, token string) bool {
	scheme, got, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return jsonString(s)
}
