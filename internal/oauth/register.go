package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"mcpx/internal/config"
)

// Settings are a server's sign-in settings from its config entry.
type Settings struct {
	ClientID     string // pre-registered client id
	ClientSecret string // its secret, if it is a confidential client
	// ClientMetadataURL is the https URL of a client ID metadata document
	// describing mcpx, used as the client id where the authorization
	// server supports such documents.
	ClientMetadataURL string
	Scopes            []string // requested instead of the discovered ones
	// RedirectURI is a fixed loopback redirect URI (for an authorization
	// server that wants one registered in advance); "" picks a free port
	// on 127.0.0.1.
	RedirectURI string
}

// Registration is the client id mcpx uses with one authorization server,
// and how it authenticates at the token endpoint.
type Registration struct {
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret,omitempty"`
	// AuthMethod is client_secret_basic, client_secret_post or none.
	AuthMethod string `json:"authMethod"`
	// How: "configured", "metadata-document" or "dynamic".
	How string `json:"how"`
}

// register picks the client id, in the spec's priority: a pre-registered
// one from the config, a client ID metadata document where the server
// supports them, else dynamic client registration.
func (c *Client) register(ctx context.Context, md *ServerMetadata, s Settings, redirectURI string) (*Registration, error) {
	switch {
	case s.ClientID != "":
		r := &Registration{ClientID: s.ClientID, ClientSecret: s.ClientSecret, How: "configured"}
		r.AuthMethod = authMethod(md, r.ClientSecret != "", "")
		return r, nil
	case s.ClientMetadataURL != "" && md.ClientIDMetadataDocumentSupported:
		return &Registration{ClientID: s.ClientMetadataURL, AuthMethod: "none", How: "metadata-document"}, nil
	case md.RegistrationEndpoint != "":
		return c.registerDynamic(ctx, md, redirectURI)
	}
	return nil, fmt.Errorf("authorization server %s offers no way for mcpx to register (no dynamic registration%s): set oauth.clientId (and oauth.clientSecret) in the server's config",
		md.Issuer, map[bool]string{true: ", and no oauth.clientMetadataUrl is configured", false: " or client ID metadata documents"}[md.ClientIDMetadataDocumentSupported])
}

// authMethod chooses how to authenticate at the token endpoint: the one
// the registration named, else, with a secret, client_secret_basic unless
// the server lists only client_secret_post (RFC 8414's default is basic);
// without one, none.
func authMethod(md *ServerMetadata, secret bool, registered string) string {
	if registered != "" {
		return registered
	}
	if !secret {
		return "none"
	}
	if m := md.TokenEndpointAuthMethodsSupported; len(m) > 0 && !slices.Contains(m, "client_secret_basic") && slices.Contains(m, "client_secret_post") {
		return "client_secret_post"
	}
	return "client_secret_basic"
}

// registerDynamic registers mcpx with RFC 7591: a native client with the
// loopback redirect URI, asking to be a public client when the server
// allows it.
func (c *Client) registerDynamic(ctx context.Context, md *ServerMetadata, redirectURI string) (*Registration, error) {
	method := "none"
	if m := md.TokenEndpointAuthMethodsSupported; len(m) > 0 && !slices.Contains(m, "none") {
		method = m[0]
	}
	body, _ := json.Marshal(map[string]any{
		"client_name":                "mcpx",
		"redirect_uris":              []string{redirectURI},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		"application_type":           "native",
	})
	what := "registering with " + md.RegistrationEndpoint
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, md.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, unwrapURLError(err))
	}
	defer resp.Body.Close()
	var out struct {
		ClientID     string   `json:"client_id"`
		ClientSecret string   `json:"client_secret"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
		RedirectURIs []string `json:"redirect_uris"`
		Error        string   `json:"error"`
		Description  string   `json:"error_description"`
	}
	if resp.StatusCode/100 != 2 {
		_ = c.decode(resp, what, &out)
		return nil, fmt.Errorf("%s: HTTP %d %s %s", what, resp.StatusCode, out.Error, out.Description)
	}
	if err := c.decode(resp, what, &out); err != nil {
		return nil, err
	}
	if out.ClientID == "" {
		return nil, fmt.Errorf("%s: the answer has no client_id", what)
	}
	if len(out.RedirectURIs) > 0 && !slices.Contains(out.RedirectURIs, redirectURI) {
		return nil, fmt.Errorf("%s: the server registered other redirect URIs than mcpx's loopback one; refusing them", what)
	}
	switch out.AuthMethod {
	case "", "none", "client_secret_basic", "client_secret_post":
	default:
		return nil, fmt.Errorf("%s: the server registered a token endpoint auth method mcpx does not speak", what)
	}
	r := &Registration{ClientID: out.ClientID, ClientSecret: out.ClientSecret, How: "dynamic"}
	r.AuthMethod = authMethod(md, r.ClientSecret != "", out.AuthMethod)
	return r, nil
}

// SettingsOf returns a server's config "oauth" object as Settings.
func SettingsOf(o *config.OAuth) Settings {
	if o == nil {
		return Settings{}
	}
	return Settings{ClientID: o.ClientID, ClientSecret: o.ClientSecret, ClientMetadataURL: o.ClientMetadataURL, Scopes: o.Scopes, RedirectURI: o.RedirectURI}
}
