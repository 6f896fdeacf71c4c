package config

import (
	"reflect"
	"testing"
)

func TestTokenExchangeSettings(t *testing.T) {
	c, err := parse(`{"mcpServers": {
		"gh": {"url": "https://h/mcp", "oauth": {"accounts": "per-person", "tokenExchange": {
			"tokenEndpoint": "http://127.0.0.1:9998/oauth/v2/token", "clientId": "mcpx", "clientSecret": "s3cret",
			"audience": "upstream-client", "resource": "https://h/mcp", "scopes": ["openid", "profile"], "signInFallback": true}}},
		"lin": {"url": "https://l/mcp", "oauth": {"accounts": "per-person"}},
		"disc": {"url": "https://d/mcp", "oauth": {"accounts": "per-person", "tokenExchange": {
			"issuer": "https://idp.example/", "clientId": "mcpx", "audience": "d"}}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := &TokenExchange{TokenEndpoint: "http://127.0.0.1:9998/oauth/v2/token", ClientID: "mcpx", ClientSecret: "s3cret",
		Audience: "upstream-client", Resource: "https://h/mcp", Scopes: []string{"openid", "profile"}, SignInFallback: true}
	if got := c.Servers["gh"].OAuth.TokenExchange; !reflect.DeepEqual(got, want) {
		t.Errorf("tokenExchange = %+v, want %+v", got, want)
	}
	if got, want := c.Servers["disc"].OAuth.TokenExchange, (&TokenExchange{Issuer: "https://idp.example/", ClientID: "mcpx", Audience: "d"}); !reflect.DeepEqual(got, want) {
		t.Errorf("tokenExchange by issuer = %+v, want %+v", got, want)
	}
	if got := c.Servers["lin"].OAuth.TokenExchange; got != nil {
		t.Errorf("a server without tokenExchange has %+v", got)
	}
}
