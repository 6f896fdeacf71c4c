package daemon

import (
	"log/slog"
	"net/http"
	"time"

	"mcpx/internal/authn"
	"mcpx/internal/config"
	"mcpx/internal/hosthttp"
)

// people is mcpx as an OAuth protected resource under a's config
// (mcpx.auth), nil when it names no authorization server. Its issuers,
// audience, scopes, claims and introspection are read at start; a reload
// changes the groups' policies alone.
func people(a config.Auth, log *slog.Logger) *hosthttp.People {
	if !a.Enabled() {
		return nil
	}
	v := authn.New(authn.Options{
		Issuers: a.Issuers, Audience: a.Audience, Scopes: a.Scopes, NameClaim: a.NameClaim, GroupsClaim: a.GroupsClaim,
		IntrospectionURL: a.Introspection.URL, ClientID: a.Introspection.ClientID, ClientSecret: a.Introspection.ClientSecret,
		Client: &http.Client{Timeout: 10 * time.Second}, Logger: log,
	})
	return &hosthttp.People{Verifier: v, Resource: a.Audience, Servers: a.Issuers, Scopes: a.Scopes}
}

// serveMetadata serves access's protected resource metadata on mux, if
// people may sign in.
func serveMetadata(mux *http.ServeMux, access hosthttp.Access) {
	if access.People == nil {
		return
	}
	h := access.People.Metadata(access)
	for _, p := range access.People.MetadataPaths() {
		mux.Handle(p, h)
	}
}
