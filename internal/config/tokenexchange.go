package config

import (
	"net"
	"net/url"
	"strings"
)

// TokenExchange is a per-person server's RFC 8693 token exchange (its
// oauth.tokenExchange object): a person signed in to mcpx with an access
// token of an identity provider the upstream also trusts gets the
// upstream's token by exchanging their own at TokenEndpoint, with no
// browser step.
type TokenExchange struct {
	// TokenEndpoint is the identity provider's token endpoint: https, or
	// http on a loopback address. Issuer, instead, names the provider,
	// whose metadata (RFC 8414, or OpenID Connect discovery) gives the
	// endpoint; exactly one of the two is set.
	TokenEndpoint string
	Issuer        string
	// ClientID and ClientSecret are mcpx's client at the provider, the
	// one allowed to exchange tokens.
	ClientID     string
	ClientSecret string
	// Audience and Resource name the upstream the token is asked for
	// (RFC 8693 audience; RFC 8707 resource); at least one is set.
	Audience string
	Resource string
	Scopes   []string
	// SignInFallback lets a refused or failed exchange fall back to the
	// person's browser sign-in; false answers the call with the error.
	SignInFallback bool
}

var tokenExchangeFields = []string{"tokenEndpoint", "issuer", "clientId", "clientSecret", "audience", "resource", "scopes", "signInFallback"}

func (p *parser) tokenExchange(n *node, at path) (*TokenExchange, error) {
	f, err := p.object(n, at, tokenExchangeFields)
	if err != nil {
		return nil, err
	}
	t := &TokenExchange{}
	for _, m := range n.members {
		v, at := m.val, at.key(m.key)
		switch m.key {
		case "tokenEndpoint":
			t.TokenEndpoint, err = p.expanded(v, at)
			if err == nil && !exchangeEndpoint(t.TokenEndpoint) {
				err = p.errorf(v.off, at, "must be an https URL (http only on a loopback address), without a query or fragment")
			}
		case "issuer":
			t.Issuer, err = p.expanded(v, at)
			if err == nil && !exchangeEndpoint(t.Issuer) {
				err = p.errorf(v.off, at, "must be the identity provider's issuer: an https URL (http only on a loopback address), without a query or fragment")
			}
		case "clientId":
			t.ClientID, err = p.expanded(v, at)
		case "clientSecret":
			t.ClientSecret, err = p.expanded(v, at)
		case "audience":
			t.Audience, err = p.expanded(v, at)
		case "resource":
			t.Resource, err = p.expanded(v, at)
			if err == nil {
				if u, perr := url.Parse(t.Resource); perr != nil || !u.IsAbs() || u.Fragment != "" {
					err = p.errorf(v.off, at, "must be an absolute URI without a fragment (RFC 8707)")
				}
			}
		case "scopes":
			t.Scopes, err = p.args(v, at)
			for _, s := range t.Scopes {
				if err == nil && (s == "" || strings.ContainsAny(s, " \t\"\\")) {
					err = p.errorf(v.off, at, "a scope is one non-empty word")
				}
			}
		case "signInFallback":
			t.SignInFallback, err = p.boolean(v, at)
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case f["tokenEndpoint"] == nil && f["issuer"] == nil:
		return nil, p.errorf(n.off, at, "tokenEndpoint or issuer is required: the identity provider's token endpoint, or its issuer to discover it from")
	case f["tokenEndpoint"] != nil && f["issuer"] != nil:
		return nil, p.errorf(n.off, at, "tokenEndpoint and issuer exclude each other: the endpoint is discovered from the issuer")
	case t.ClientID == "":
		return nil, p.errorf(n.off, at, "clientId is required: the client the identity provider lets exchange tokens")
	case t.Audience == "" && t.Resource == "":
		return nil, p.errorf(n.off, at, "audience or resource is required: it names the upstream the token is for")
	}
	return t, nil
}

// exchangeEndpoint reports whether s may receive people's access tokens:
// https, or http on a loopback address.
func exchangeEndpoint(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	if u.Scheme == "https" {
		return true
	}
	h := u.Hostname()
	ip := net.ParseIP(h)
	return u.Scheme == "http" && (strings.EqualFold(h, "localhost") || (ip != nil && ip.IsLoopback()))
}
