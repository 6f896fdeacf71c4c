package hosthttp

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"mcpx/internal/principal"
	"mcpx/internal/sock"
)

// Access says who may use the HTTP face through one listener.
type Access struct {
	// Addr is the address a TCP listener is bound to (host:port, the real
	// port when 0 was asked for). "" means the daemon's unix socket, which
	// is mode 0600 and checks its peers: no Host or token check there, and
	// no browser (Origin or Referer) either.
	Addr string
	// Tokens, if not nil, are the bearer tokens a request must present one
	// of, as "Authorization: Bearer <token>".
	Tokens Tokens
	// AllowedHosts are further Host header values the listener answers
	// for, lower case: "name" (any port, or none) or "name:port". A
	// replica behind a load balancer names the balancer here.
	AllowedHosts []string
	// People, if not nil, takes people's access tokens too (mcpx.auth):
	// a bearer token that is a JWT, or one no entry of Tokens opens, is
	// theirs to check (people.go).
	People *People
}

// Tokens says which bearer tokens open the HTTP face, and whose each is.
// A Tokens must be safe for concurrent use.
type Tokens interface {
	// Match returns the name of tok: "" for the default token, which
	// every host may share, or the name of a host's own token; ok is
	// false if tok opens nothing. It compares in constant time.
	Match(tok string) (name string, ok bool)
}

// CheckingTokens are Tokens that may be unable to tell (a store shared by
// replicas that cannot be reached): Check says why, and the request is
// refused with 503 rather than 401, since the token may be good.
type CheckingTokens interface {
	Tokens
	// Check is Match, or an error (which never quotes tok) when it
	// cannot tell.
	Check(tok string) (name string, ok bool, err error)
}

// Who an HTTP request comes from is decided here, once (package
// principal): a host with a named token is a principal of its own; every
// host with the default token (or, with no token required, every host)
// is one principal, principal.DefaultToken; every peer of the unix
// socket (this user's own processes) speaking MCP is
// principal.SocketHost. The requestState mcpx seals and a legacy session
// are bound to it; it travels with the request to its host session, whose
// policy decides what it may do.

// CloseUnread makes a refusal the connection's last answer: net/http
// drains at most 256 KiB of the body and then closes, and the client has
// refusalDrain to send what it drains (a client that sent its body is
// not reset before it reads the answer; one dripping it loses the
// connection when the time is up).
func CloseUnread(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Connection", "close")
	if r.ContentLength != 0 {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(refusalDrain))
	}
}

// refusalDrain is how long a refused request's body may take to arrive.
const refusalDrain = time.Second

// The order of the checks matters: a foreign Host or Origin is a 403
// whether or not the request carries a token (DNS rebinding protection
// must not depend on a secret the attacker lacks anyway, and conformance
// suites test it without one).

// Verdict is what [Access.Decide] makes of a request: Status 0 and its
// principal, or the status and reason it is refused with, and the
// WWW-Authenticate challenge of a 401 or of a 403 for a token lacking a
// scope ("" for none).
type Verdict struct {
	Status         int
	Msg, Challenge string
	Who            principal.Principal
}

func refused(status int, msg string) Verdict { return Verdict{Status: status, Msg: msg} }

// Decide applies all of a's checks (Host, Origin, token) to r: the
// request's principal, or why it is refused.
func (a Access) Decide(r *http.Request) Verdict {
	if a.Addr == "" {
		if r.Header.Get("Origin") != "" || r.Header.Get("Referer") != "" {
			return refused(http.StatusForbidden, "forbidden: the unix socket serves no browser")
		}
		return Verdict{Who: principal.SocketHost()}
	}
	if !a.hostAllowed(r.Host) {
		return refused(http.StatusForbidden, "forbidden: Host "+Quote(r.Host)+" is not this server's address (DNS rebinding protection)")
	}
	if o := r.Header.Get("Origin"); o != "" && !originAllowed(o, r.Host) {
		return refused(http.StatusForbidden, "forbidden: Origin "+Quote(o)+" may not use this server")
	}
	if a.Tokens == nil && a.People == nil {
		return Verdict{Who: principal.DefaultToken()}
	}
	tok := Bearer(r.Header.Get("Authorization"))
	if a.People != nil && (a.Tokens == nil || looksLikeJWT(tok)) {
		return a.People.decide(r, tok)
	}
	var name string
	var ok bool
	if ct, checks := a.Tokens.(CheckingTokens); checks {
		var err error
		if name, ok, err = ct.Check(tok); err != nil && a.People == nil {
			return refused(http.StatusServiceUnavailable, "service unavailable: cannot check the bearer token now: "+err.Error())
		} else if err != nil {
			// Perhaps a person's opaque token: introspection tells.
			if v := a.People.decide(r, tok); v.Status == 0 {
				return v
			}
			return refused(http.StatusServiceUnavailable, "service unavailable: cannot check the bearer token now: "+err.Error())
		}
	} else {
		name, ok = a.Tokens.Match(tok)
	}
	switch {
	case !ok && a.People != nil && tok != "":
		return a.People.decide(r, tok)
	case !ok:
		v := refused(http.StatusUnauthorized, "unauthorized: send Authorization: Bearer <token> (`mcpx token` prints it; `mcpx token --name NAME` a host's own)")
		v.Challenge = a.challenge(r)
		return v
	case name == "":
		return Verdict{Who: principal.DefaultToken()}
	}
	return Verdict{Who: principal.NamedToken(name, tok)}
}

// hostAllowed reports whether a Host header names this listener: its port,
// and localhost, a loopback IP, the listen host itself, or, for a listener
// on every interface, any IP literal. A DNS name other than localhost is
// what a DNS rebinding attack sends, and is refused.
func (a Access) hostAllowed(host string) bool {
	if a.namedHost(host) {
		return true
	}
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

// namedHost reports whether host is one of a.AllowedHosts: an entry
// with a port matches that host and port, one without matches the name
// with any port or none.
func (a Access) namedHost(host string) bool {
	host = strings.ToLower(host)
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.Trim(name, "[]")
	for _, e := range a.AllowedHosts {
		if _, _, err := net.SplitHostPort(e); err == nil {
			if e == host {
				return true
			}
		} else if strings.Trim(e, "[]") == name {
			return true
		}
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

// Bearer returns the token of an Authorization header, "" if it has none.
func Bearer(header string) string {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// Quote is s as a JSON string, cut at 100 bytes: how a refusal names a
// header's value.
func Quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// CheckBrowser applies a's Host and Origin checks but not its token, for
// a page of mcpx's own on the same listener (the live view), which a
// browser reaches with a cookie of its own instead: the status and
// reason a request is refused with, or 0.
func (a Access) CheckBrowser(r *http.Request) (status int, msg string) {
	if a.Addr == "" {
		return http.StatusForbidden, "forbidden: the unix socket serves no browser"
	}
	if !a.hostAllowed(r.Host) {
		return http.StatusForbidden, "forbidden: Host " + Quote(r.Host) + " is not this server's address (DNS rebinding protection)"
	}
	if o := r.Header.Get("Origin"); o != "" && !originAllowed(o, r.Host) {
		return http.StatusForbidden, "forbidden: Origin " + Quote(o) + " may not use this server"
	}
	return 0, ""
}

// Check applies all of a's checks (Host, Origin, token) for what else the
// listener serves (the local API's /v1): the request's principal, or the
// status and reason it is refused with and the WWW-Authenticate header's
// value to send with it ("" for none); a request that passes trusts its
// connection (sock.Trust), as the MCP endpoint's do.
func (a Access) Check(r *http.Request) (who principal.Principal, status int, msg, challenge string) {
	v := a.Decide(r)
	if v.Status == 0 {
		sock.Trust(r.Context())
	}
	return v.Who, v.Status, v.Msg, v.Challenge
}

// Guard returns h behind all of a's checks (Host, Origin, token), for
// what else the listener serves (the metrics page), with the request's
// principal in its context; a refused request gets a plain-text error.
func (a Access) Guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := a.Decide(r)
		if v.Status != 0 {
			if v.Challenge != "" {
				w.Header().Set("WWW-Authenticate", v.Challenge)
			}
			http.Error(w, v.Msg, v.Status)
			return
		}
		sock.Trust(r.Context())
		h.ServeHTTP(w, r.WithContext(principal.NewContext(r.Context(), v.Who)))
	})
}
