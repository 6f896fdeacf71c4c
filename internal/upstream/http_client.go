package upstream

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/sock"
)

// httpShared is what a pool's HTTP upstreams share: one client, so that
// connections are reused, and the era each origin was found to speak.
type httpShared struct {
	client *http.Client
	// authorize wraps a server's round tripper with its sign-in; nil: none.
	authorize func(srv *config.Server, person string, base http.RoundTripper) http.RoundTripper

	mu   sync.Mutex
	eras map[string]httpEra
}

// httpEra is how an HTTP upstream is spoken to.
type httpEra struct {
	kind    eraKind
	version string // modern: the revision; legacy: "" (initialize negotiates)
}

type eraKind int

const (
	eraModern eraKind = iota + 1 // Streamable HTTP 2026-07-28: per-request POSTs
	eraLegacy                    // Streamable HTTP 2025-03-26 … 2025-11-25: initialize, sessions
	eraSSE                       // HTTP+SSE 2024-11-05: a GET stream and an endpoint to POST to
)

func (k eraKind) String() string {
	switch k {
	case eraModern:
		return "modern Streamable HTTP"
	case eraLegacy:
		return "legacy Streamable HTTP"
	case eraSSE:
		return "HTTP+SSE"
	}
	return "unknown"
}

// Bounds of the client. There is no overall timeout: a request's stream
// lives as long as the request (its timers and its cancellation end it).
const (
	dialTimeout         = 10 * time.Second
	tlsHandshakeTimeout = 10 * time.Second
	idleConnTimeout     = 90 * time.Second
	maxIdleConnsPerHost = 64
)

func newHTTPShared() *httpShared {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           sock.RawTCPDial((&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext),
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		IdleConnTimeout:       idleConnTimeout,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   maxIdleConnsPerHost,
		ExpectContinueTimeout: time.Second,
	}
	return &httpShared{client: &http.Client{Transport: tr, CheckRedirect: sameOriginRedirect}, eras: map[string]httpEra{}}
}

// sameOriginRedirect follows a redirect within the origin of the request
// that was sent first, and refuses one to another origin: the client
// would send it the server's configured headers (API keys among them; Go
// strips only Authorization and cookies) and a Referer. The error names
// both URLs, so the user can point the config at the new one.
func sameOriginRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return fmt.Errorf("stopped after %d redirects", len(via))
	}
	if first := via[0].URL; !sameOrigin(first, req.URL) {
		return fmt.Errorf("refusing a redirect from %s to %s: another origin would get this server's headers; configure the new URL if it is the server's", redacted(first), redacted(req.URL))
	}
	return nil
}

// redacted is u without its user information and query, which may hold
// secrets.
func redacted(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.Fragment = nil, "", ""
	return c.String()
}

// clientFor returns the client of srv's requests: the shared one, or
// one over the same connections that carries srv's sign-in (person's own
// on a per-person server) and, when the server names an identity header,
// person's ID in it.
func (h *httpShared) clientFor(srv *config.Server, person string) *http.Client {
	base := h.client.Transport
	if person != "" && srv.OAuth != nil && srv.OAuth.IdentityHeader != "" {
		base = identityHeader{base: base, name: srv.OAuth.IdentityHeader, value: person}
	}
	if h.authorize == nil {
		if base == h.client.Transport {
			return h.client
		}
		return &http.Client{Transport: base, CheckRedirect: sameOriginRedirect}
	}
	for k := range srv.Headers {
		if strings.EqualFold(k, "Authorization") {
			return h.client // the config's own credentials
		}
	}
	return &http.Client{Transport: h.authorize(srv, person, base), CheckRedirect: sameOriginRedirect}
}

// identityHeader sets a per-person session's identity header on each of
// its requests (the client sends them to the server's origin alone: see
// sameOriginRedirect).
type identityHeader struct {
	base        http.RoundTripper
	name, value string
}

func (t identityHeader) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Header.Set(t.name, t.value)
	return t.base.RoundTrip(out)
}

// era returns the cached era of an origin.
func (h *httpShared) era(key string) (httpEra, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.eras[key]
	return e, ok
}

func (h *httpShared) remember(key string, e httpEra) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.eras[key] = e
}

func (h *httpShared) forget(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.eras, key)
}

// close drops the client's idle connections.
func (h *httpShared) close() { h.client.CloseIdleConnections() }

// originKey is the key of the era cache: scheme://host:port/path, the port
// made explicit, without query or fragment.
func originKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + net.JoinHostPort(u.Hostname(), port) + u.EscapedPath()
}

// sameOrigin reports whether two URLs share scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		return map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return a.Scheme == b.Scheme && a.Hostname() == b.Hostname() && port(a) == port(b)
}

type urlError = url.Error

// SignInNeeded is the error of an HTTP upstream that needs the user to
// sign in (again, or with more scopes) before mcpx can reach it: the
// round tripper's error says so (oauth's SignInError does). upstream and
// the relay name it by this method, not by oauth's type.
type SignInNeeded interface {
	error
	SignIn() (server, reason string, scopes []string)
}

// needsSignIn reports whether err is a server asking for a sign-in.
func needsSignIn(err error) bool {
	var s SignInNeeded
	return errors.As(err, &s)
}
