package hosthttp

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"mcpx/internal/authn"
	"mcpx/internal/principal"
)

// People is mcpx as an OAuth 2.1 protected resource (MCP authorization;
// RFC 9728): the access tokens of people signed in at the configured
// authorization servers open the HTTP face, each person a principal of
// their own (principal.Person).
type People struct {
	// Verifier checks their tokens.
	Verifier *authn.Verifier
	// Resource is mcpx's resource URL (the tokens' audience), Servers the
	// authorization servers' issuer identifiers, Scopes those a token
	// must carry: the protected resource metadata names them.
	Resource string
	Servers  []string
	Scopes   []string
}

// looksLikeJWT reports whether tok has a JWS's three parts; mcpx's own
// tokens (base64url) never have a dot.
func looksLikeJWT(tok string) bool { return strings.Count(tok, ".") == 2 }

// decide makes the person tok speaks for the request's principal, or
// refuses it as the spec says: 401 invalid_token, 403
// insufficient_scope, or 503 when the token cannot be checked now
// (failing closed).
func (p *People) decide(r *http.Request, tok string) Verdict {
	if tok == "" {
		v := refused(http.StatusUnauthorized, "unauthorized: sign in at the authorization server named by "+p.MetadataURL()+", or send a token of mcpx (`mcpx token`)")
		v.Challenge = p.challenge("", "")
		return v
	}
	id, err := p.Verifier.Verify(r.Context(), tok)
	if err == nil {
		return Verdict{Who: principal.Person(id.Issuer, id.Subject, id.Name, id.Groups)}
	}
	var e *authn.Error
	if !errors.As(err, &e) {
		e = &authn.Error{Kind: authn.Unavailable, Why: "cannot check the token", Err: err}
	}
	switch e.Kind {
	case authn.InsufficientScope:
		v := refused(http.StatusForbidden, "forbidden: "+e.Error())
		v.Challenge = p.challenge("insufficient_scope", e.Why)
		return v
	case authn.Unavailable:
		return refused(http.StatusServiceUnavailable, "service unavailable: cannot check the access token now: "+e.Error())
	}
	v := refused(http.StatusUnauthorized, "unauthorized: "+e.Error())
	v.Challenge = p.challenge("invalid_token", e.Why)
	return v
}

// challenge is the WWW-Authenticate value naming the metadata and the
// scopes (RFC 6750 §3, RFC 9728 §5.1), with error and its description
// unless error is "".
func (p *People) challenge(errCode, desc string) string {
	v := `Bearer realm="mcpx", resource_metadata=` + quoted(p.MetadataURL())
	if len(p.Scopes) > 0 {
		v += `, scope=` + quoted(strings.Join(p.Scopes, " "))
	}
	if errCode != "" {
		v += `, error="` + errCode + `", error_description=` + quoted(desc)
	}
	return v
}

// quoted is s as an RFC 9110 quoted-string, of printable ASCII alone.
func quoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// challenge is the WWW-Authenticate value of a 401 for the request: a
// People's when people may sign in, else mcpx's own tokens'.
func (a Access) challenge(r *http.Request) string {
	if a.People != nil {
		if r.Header.Get("Authorization") != "" {
			return a.People.challenge("invalid_token", "the token opens nothing here")
		}
		return a.People.challenge("", "")
	}
	v := `Bearer realm="mcpx"`
	if r.Header.Get("Authorization") != "" {
		v += `, error="invalid_token"`
	}
	return v
}

// MetadataPaths are the paths the protected resource metadata is served
// at: the well-known path, and it suffixed with the resource URL's path
// (RFC 9728 §3.1), which is where a client that knows only the MCP
// endpoint looks first.
func (p *People) MetadataPaths() []string {
	out := []string{"/.well-known/oauth-protected-resource"}
	if u, err := url.Parse(p.Resource); err == nil && strings.Trim(u.Path, "/") != "" {
		out = append(out, out[0]+"/"+strings.Trim(u.Path, "/"))
	}
	return out
}

// MetadataURL is where the metadata of Resource is: its origin, the
// well-known path, then its path.
func (p *People) MetadataURL() string {
	u, err := url.Parse(p.Resource)
	if err != nil {
		return ""
	}
	paths := p.MetadataPaths()
	return u.Scheme + "://" + u.Host + paths[len(paths)-1]
}

// Metadata serves the protected resource metadata (RFC 9728 §2) to
// anyone whose Host a names (it holds no secret; a browser-based client
// may read it from any origin).
func (p *People) Metadata(a Access) http.Handler {
	body, _ := json.Marshal(struct {
		Resource      string   `json:"resource"`
		Servers       []string `json:"authorization_servers"`
		Scopes        []string `json:"scopes_supported,omitempty"`
		BearerMethods []string `json:"bearer_methods_supported"`
		ResourceName  string   `json:"resource_name"`
	}{p.Resource, p.Servers, p.Scopes, []string{"header"}, "mcpx"})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if a.Addr != "" && !a.hostAllowed(r.Host) {
			http.Error(w, "forbidden: Host "+Quote(r.Host)+" is not this server's address (DNS rebinding protection)", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Cache-Control", "max-age=300")
		w.Write(body)
	})
}
