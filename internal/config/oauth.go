package config

import (
	"net"
	"net/url"
	"strings"
)

// OAuth is an HTTP server's sign-in settings (its "oauth" object). A
// server needs none to be signed in to: mcpx discovers the rest. Values
// have their ${VAR} references expanded.
type OAuth struct {
	// ClientID and ClientSecret are a client registered with the server's
	// authorization server in advance.
	ClientID     string
	ClientSecret string
	// ClientMetadataURL is the https URL of a client ID metadata document
	// describing mcpx, used where the authorization server supports them.
	ClientMetadataURL string
	// Scopes are requested instead of the ones the server names.
	Scopes []string
	// RedirectURI is a fixed loopback redirect URI, for an authorization
	// server that wants it registered in advance.
	RedirectURI string
	// Accounts is whose account mcpx acts as upstream: AccountsShared
	// (one sign-in for all, mcpx login's) or AccountsPerPerson (each
	// principal signs in to the server as themself, through the gateway).
	Accounts string
	// IdentityHeader, when set on a per-person server, is a request header
	// that carries the caller's principal ID upstream.
	IdentityHeader string
	// TokenExchange, on a per-person server, gets a person's upstream
	// token by exchanging their own access token (RFC 8693).
	TokenExchange *TokenExchange
}

// Accounts values.
const (
	AccountsShared    = "shared"
	AccountsPerPerson = "per-person"
)

var oauthFields = []string{"clientId", "clientSecret", "clientMetadataUrl", "scopes", "redirectUri", "accounts", "identityHeader", "tokenExchange"}

// PerPerson reports whether each principal acts upstream as themself on
// the server: a per-person sign-in and session each.
func (s *Server) PerPerson() bool { return s.OAuth != nil && s.OAuth.Accounts == AccountsPerPerson }

func (p *parser) oauth(n *node, at path) (*OAuth, error) {
	f, err := p.object(n, at, oauthFields)
	if err != nil {
		return nil, err
	}
	o := &OAuth{Accounts: AccountsShared}
	for _, m := range n.members {
		v, at := m.val, at.key(m.key)
		switch m.key {
		case "clientId":
			o.ClientID, err = p.expanded(v, at)
		case "clientSecret":
			o.ClientSecret, err = p.expanded(v, at)
		case "clientMetadataUrl":
			o.ClientMetadataURL, err = p.expanded(v, at)
			if err == nil {
				if u, perr := url.Parse(o.ClientMetadataURL); perr != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" {
					err = p.errorf(v.off, at, "must be an https URL with a path")
				}
			}
		case "scopes":
			o.Scopes, err = p.args(v, at)
		case "accounts":
			o.Accounts, err = p.str(v, at)
			if err == nil && o.Accounts != AccountsShared && o.Accounts != AccountsPerPerson {
				err = p.errorf(v.off, at, "must be %q or %q", AccountsShared, AccountsPerPerson)
			}
		case "identityHeader":
			o.IdentityHeader, err = p.str(v, at)
			if err == nil && !validHeaderName(o.IdentityHeader) {
				err = p.errorf(v.off, at, "must be an HTTP header name")
			} else if err == nil && (strings.EqualFold(o.IdentityHeader, "Authorization") || strings.HasPrefix(strings.ToLower(o.IdentityHeader), "mcp-")) {
				err = p.errorf(v.off, at, "must not be Authorization or an MCP header")
			}
		case "tokenExchange":
			o.TokenExchange, err = p.tokenExchange(v, at)
		case "redirectUri":
			o.RedirectURI, err = p.expanded(v, at)
			if err == nil && !loopbackURL(o.RedirectURI) {
				err = p.errorf(v.off, at, "must be an http URL on a loopback address with a port (127.0.0.1, [::1] or localhost): mcpx receives the redirect itself")
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if _, ok := f["identityHeader"]; ok && o.Accounts != AccountsPerPerson {
		return nil, p.errorf(n.off, at, "identityHeader needs accounts %q: a shared session carries no one's identity", AccountsPerPerson)
	}
	if _, ok := f["tokenExchange"]; ok && o.Accounts != AccountsPerPerson {
		return nil, p.errorf(n.off, at, "tokenExchange needs accounts %q: it exchanges a person's own token", AccountsPerPerson)
	}
	if _, ok := f["clientSecret"]; ok && o.ClientID == "" {
		return nil, p.errorf(n.off, at, "clientSecret needs clientId")
	}
	return o, nil
}

func loopbackURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" || u.Port() == "" || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// validHeaderName reports whether s is an HTTP header field name (an
// RFC 9110 token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r >= 0x80 || !(isWordByte(byte(r)) || strings.ContainsRune("!#$%&'*+.^`|~", r)) {
			return false
		}
	}
	return true
}
