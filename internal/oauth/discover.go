package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Client makes the authorization flow's requests: discovery,
// registration, token, revocation. The zero value uses
// http.DefaultClient and DefaultMaxBody.
type Client struct {
	HTTP    *http.Client
	MaxBody int64 // bytes of one response body; 0 means DefaultMaxBody
}

// httpClient is the client with its redirects held to one origin.
func (c *Client) httpClient() *http.Client {
	hc := *http.DefaultClient
	if c != nil && c.HTTP != nil {
		hc = *c.HTTP
	}
	hc.CheckRedirect = sameOriginRedirect
	return &hc
}

// maxRedirects bounds the redirects one request follows, as net/http's
// default does.
const maxRedirects = 10

// sameOriginRedirect follows a redirect only within the origin it starts
// from, and sends no Referer: a redirect to another origin is answered
// as it is (a 3xx the caller refuses), so that what a server names is
// never fetched elsewhere, nor carries the URL that led there.
func sameOriginRedirect(req *http.Request, via []*http.Request) error {
	req.Header.Del("Referer")
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if !sameOrigin(req.URL, via[0].URL) {
		return http.ErrUseLastResponse
	}
	return nil
}

func (c *Client) maxBody() int64 {
	if c != nil && c.MaxBody > 0 {
		return c.MaxBody
	}
	return DefaultMaxBody
}

// ResourceMetadata is an RFC 9728 protected resource metadata document.
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
}

// ServerMetadata is an RFC 8414 (or OpenID Connect discovery) document.
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint,omitempty"`
	RevocationEndpoint                string   `json:"revocation_endpoint,omitempty"`
	ScopesSupported                   []string `json:"scopes_supported,omitempty"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported,omitempty"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported,omitempty"`
	IssParameterSupported             bool     `json:"authorization_response_iss_parameter_supported,omitempty"`
}

// resourceMetadataURLs are where a server's protected resource metadata
// is looked for when its challenge names none, in the spec's order: the
// well-known URI with the MCP endpoint's path inserted, then the root one.
func resourceMetadataURLs(resource *url.URL) []string {
	origin := resource.Scheme + "://" + resource.Host
	var out []string
	if p := strings.TrimSuffix(resource.EscapedPath(), "/"); p != "" {
		out = append(out, origin+"/.well-known/oauth-protected-resource"+p)
	}
	return append(out, origin+"/.well-known/oauth-protected-resource")
}

// DiscoverResource fetches the protected resource metadata of the MCP
// server at resource: at the challenge's resource_metadata URL when there
// is one, else at the well-known URIs in order. The challenge's URL must
// be on the server's own origin (the spec has the MCP server serve its
// metadata; a URL elsewhere, such as another port of the loopback
// address, is refused unfetched, as it would make mcpx a proxy into
// whatever the server names). The document must be for this server: its
// resource is the server's URL or, for a document at the root, a prefix
// of it on the same origin (RFC 9728 §3.3 requires the resource to be
// the identifier the metadata was looked up for; anything else is
// refused).
func (c *Client) DiscoverResource(ctx context.Context, resource string, ch *Challenge) (*ResourceMetadata, error) {
	ru, err := url.Parse(resource)
	if err != nil || ru.Host == "" {
		return nil, fmt.Errorf("the server URL is not absolute")
	}
	urls := resourceMetadataURLs(ru)
	if ch != nil && ch.ResourceMetadata != "" {
		mu, err := url.Parse(ch.ResourceMetadata)
		if err != nil || (mu.Scheme != "https" && mu.Scheme != "http") || mu.Host == "" || mu.User != nil {
			return nil, errors.New("the server's challenge names a resource_metadata that is not an http(s) URL; refusing it")
		}
		if !sameOrigin(mu, ru) {
			return nil, fmt.Errorf("the server's challenge names a resource_metadata URL outside the server's origin %s (the MCP server serves its own metadata); mcpx fetches nothing there", ru.Scheme+"://"+ru.Host)
		}
		urls = []string{mu.String()}
	}
	md, u, last, err := firstFound[ResourceMetadata](ctx, c, urls, "protected resource metadata")
	switch {
	case err != nil:
		return nil, err
	case md == nil:
		return nil, &noMetadataError{last}
	}
	if err := checkResource(ru, md.Resource); err != nil {
		return nil, err
	}
	if len(md.AuthorizationServers) == 0 {
		return nil, fmt.Errorf("protected resource metadata %s names no authorization server", u)
	}
	return md, nil
}

// firstFound fetches the first of urls that a server does not answer with
// a 4xx (what, and the URL, name it in errors) and returns it with its
// URL; md is nil, and last the last 4xx error, when every one is a 4xx.
func firstFound[T any](ctx context.Context, c *Client, urls []string, what string) (md *T, from string, last error, err error) {
	for _, u := range urls {
		md = new(T)
		err := c.getJSON(ctx, u, what+" "+u, md)
		var se *httpStatusError
		if errors.As(err, &se) && se.status/100 == 4 {
			last = err
			continue
		}
		if err != nil {
			return nil, u, nil, err
		}
		return md, u, nil, nil
	}
	return nil, "", last, nil
}

// noMetadataError: the server publishes no protected resource metadata.
type noMetadataError struct{ last error }

func (e *noMetadataError) Error() string {
	return fmt.Sprintf("the server publishes no protected resource metadata (%v)", e.last)
}

func checkResource(server *url.URL, resource string) error {
	if resource == "" {
		return errors.New("the protected resource metadata has no resource")
	}
	r, err := url.Parse(resource)
	if err == nil && sameOrigin(r, server) {
		rp := strings.TrimSuffix(r.EscapedPath(), "/")
		sp := strings.TrimSuffix(server.EscapedPath(), "/")
		if rp == sp || strings.HasPrefix(sp, rp+"/") {
			return nil
		}
	}
	return fmt.Errorf("the protected resource metadata names another resource than this server, %s (RFC 9728 §3.3: the resource must be the one the metadata was looked up for); refusing it", server.Redacted())
}

// serverMetadataURLs are an issuer's metadata locations in the order the
// spec gives: RFC 8414 with path insertion, OpenID Connect with path
// insertion, OpenID Connect with the path appended; for an issuer without
// a path, RFC 8414 then OpenID Connect.
func serverMetadataURLs(issuer *url.URL) []string {
	origin := issuer.Scheme + "://" + issuer.Host
	p := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if p == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	}
}

// DiscoverServer fetches and checks the metadata of the authorization
// server issuer (see [checkServer]).
func (c *Client) DiscoverServer(ctx context.Context, issuer string) (*ServerMetadata, error) {
	iu, err := url.Parse(issuer)
	if err != nil || iu.Host == "" || iu.RawQuery != "" || iu.Fragment != "" {
		return nil, errors.New("the protected resource metadata names an authorization server that is not an issuer URL; refusing it")
	}
	if !isSecure(iu) {
		return nil, errors.New("the protected resource metadata names an authorization server that is not https" + insecure)
	}
	md, u, last, err := firstFound[ServerMetadata](ctx, c, serverMetadataURLs(iu), "authorization server metadata")
	switch {
	case err != nil:
		return nil, err
	case md == nil:
		return nil, fmt.Errorf("authorization server %s publishes no metadata (%v)", issuer, last)
	case md.Issuer != issuer:
		return nil, fmt.Errorf("authorization server metadata %s names another issuer than %s (RFC 8414 §3.3: they must be identical); refusing it", u, issuer)
	}
	return md, checkServer(md, iu)
}

// checkServer refuses metadata mcpx must not act on. PKCE: the spec has
// the client refuse to proceed unless code_challenge_methods_supported is
// present (and mcpx uses S256, so it must list S256). Communication
// security: every endpoint is https (http only on a loopback address).
// Origin: the authorization, token, registration and revocation
// endpoints are on the origin the metadata came from (the issuer's) — a
// document that sends the user's code or refresh token to another host
// is what a mix-up attack looks like, and mcpx does not follow it.
func checkServer(md *ServerMetadata, from *url.URL) error {
	if !slices.Contains(md.CodeChallengeMethodsSupported, "S256") {
		return fmt.Errorf("authorization server %s does not list S256 in code_challenge_methods_supported; the MCP authorization spec has clients refuse to proceed without PKCE", from.Redacted())
	}
	if md.AuthorizationEndpoint == "" || md.TokenEndpoint == "" {
		return fmt.Errorf("authorization server %s has no authorization or token endpoint", from.Redacted())
	}
	return checkEndpoints(md, from)
}

func checkEndpoints(md *ServerMetadata, from *url.URL) error {
	for _, e := range []struct{ name, u string }{
		{"authorization_endpoint", md.AuthorizationEndpoint}, {"token_endpoint", md.TokenEndpoint},
		{"registration_endpoint", md.RegistrationEndpoint}, {"revocation_endpoint", md.RevocationEndpoint},
	} {
		if e.u == "" {
			continue
		}
		u, err := url.Parse(e.u)
		if err != nil || u.Host == "" {
			return fmt.Errorf("the authorization server's %s is not an absolute URL", e.name)
		}
		if !isSecure(u) {
			return fmt.Errorf("the authorization server's %s is not https%s", e.name, insecure)
		}
		if !sameOrigin(u, from) {
			return &OriginError{Endpoint: e.name, URL: e.u, Want: from.Scheme + "://" + from.Host}
		}
	}
	return nil
}

// OriginError is authorization server metadata naming an endpoint on
// another origin than the one the metadata came from. Its message names
// the endpoint, not the URL: what a server sent is never quoted.
type OriginError struct {
	Endpoint, URL, Want string
}

func (e *OriginError) Error() string {
	return fmt.Sprintf("the authorization server's metadata puts its %s outside its own origin %s; mcpx refuses to send codes, tokens or secrets there", e.Endpoint, e.Want)
}

// insecure says why a URL that is not https is refused.
const insecure = " (the MCP authorization spec requires https for authorization server endpoints; plain http only on a loopback address)"

// isSecure: https, or http to a loopback host.
func isSecure(u *url.URL) bool {
	return u.Scheme == "https" || u.Scheme == "http" && isLoopback(u.Hostname())
}

// checkSecure refuses a URL mcpx was given (not one it fetched) that is
// not secure.
func checkSecure(u *url.URL, what string) error {
	if isSecure(u) {
		return nil
	}
	return fmt.Errorf("%s %s is not https%s", what, u.Redacted(), insecure)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		return map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}
