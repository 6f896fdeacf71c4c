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
}

var oauthFields = []string{"clientId", "clientSecret", "clientMetadataUrl", "scopes", "redirectUri"}

func (p *parser) oauth(n *node, at path) (*OAuth, error) {
	f, err := p.object(n, at, oauthFields)
	if err != nil {
		return nil, err
	}
	o := &OAuth{}
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
