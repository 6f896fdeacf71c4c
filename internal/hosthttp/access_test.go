package hosthttp

import (
	"net/http"
	"testing"

	"mcpx/internal/principal"
)

// testTokens maps each token to its name ("" for the default).
type testTokens map[string]string

func (tt testTokens) Match(tok string) (string, bool) {
	name, ok := tt[tok]
	return name, ok
}

func TestAccessCheck(t *testing.T) {
	tokens := testTokens{"s3cret-token-value": "", "cursor-token-value": "cursor"}
	tcp := Access{Addr: "127.0.0.1:7777", Tokens: tokens}
	any := Access{Addr: "0.0.0.0:7777", Tokens: tokens}
	sock := Access{}
	auth := "Bearer s3cret-token-value"
	for _, tc := range []struct {
		name      string
		a         Access
		host      string
		hdr       map[string]string
		status    int
		principal string // when status is 0; "" means "http"
	}{
		{"loopback ok", tcp, "127.0.0.1:7777", map[string]string{"Authorization": auth}, 0, ""},
		{"localhost ok", tcp, "LocalHost:7777", map[string]string{"Authorization": auth}, 0, ""},
		{"ipv6 loopback ok", tcp, "[::1]:7777", map[string]string{"Authorization": auth}, 0, ""},
		{"wrong port", tcp, "127.0.0.1:7778", map[string]string{"Authorization": auth}, 403, ""},
		{"no port", tcp, "127.0.0.1", map[string]string{"Authorization": auth}, 403, ""},
		{"dns name", tcp, "evil.example.com:7777", map[string]string{"Authorization": auth}, 403, ""},
		{"dns name, no token", tcp, "evil.example.com:7777", nil, 403, ""},
		{"other ip on loopback listener", tcp, "10.1.2.3:7777", map[string]string{"Authorization": auth}, 403, ""},
		{"ip on any-address listener", any, "10.1.2.3:7777", map[string]string{"Authorization": auth}, 0, ""},
		{"dns name on any-address listener", any, "evil.example.com:7777", map[string]string{"Authorization": auth}, 403, ""},
		{"loopback origin", tcp, "127.0.0.1:7777", map[string]string{"Authorization": auth, "Origin": "http://localhost:5173"}, 0, ""},
		{"same origin", any, "10.1.2.3:7777", map[string]string{"Authorization": auth, "Origin": "http://10.1.2.3:7777"}, 0, ""},
		{"foreign origin", tcp, "127.0.0.1:7777", map[string]string{"Authorization": auth, "Origin": "https://evil.example.com"}, 403, ""},
		{"null origin", tcp, "127.0.0.1:7777", map[string]string{"Authorization": auth, "Origin": "null"}, 403, ""},
		{"no token", tcp, "127.0.0.1:7777", nil, 401, ""},
		{"wrong token", tcp, "127.0.0.1:7777", map[string]string{"Authorization": "Bearer s3cret-token-valuf"}, 401, ""},
		{"token prefix", tcp, "127.0.0.1:7777", map[string]string{"Authorization": "Bearer s3cret"}, 401, ""},
		{"no token needed", Access{Addr: "127.0.0.1:7777"}, "127.0.0.1:7777", nil, 0, ""},
		{"a named token", tcp, "127.0.0.1:7777", map[string]string{"Authorization": "Bearer cursor-token-value"}, 0, principal.NamedToken("cursor", "cursor-token-value").ID()},
		{"a named token, lower-case scheme", tcp, "127.0.0.1:7777", map[string]string{"Authorization": "bearer  cursor-token-value "}, 0, principal.NamedToken("cursor", "cursor-token-value").ID()},
		{"a named token, foreign origin", tcp, "127.0.0.1:7777", map[string]string{"Authorization": "Bearer cursor-token-value", "Origin": "https://evil.example.com"}, 403, ""},
		{"a name is no token", tcp, "127.0.0.1:7777", map[string]string{"Authorization": "Bearer cursor"}, 401, ""},
		{"basic scheme", tcp, "127.0.0.1:7777", map[string]string{"Authorization": "Basic s3cret-token-value"}, 401, ""},
		{"socket any host", sock, "whatever", nil, 0, "socket"},
		{"socket origin", sock, "whatever", map[string]string{"Origin": "http://localhost"}, 403, ""},
		{"socket referer", sock, "whatever", map[string]string{"Referer": "http://localhost/x"}, 403, ""},
	} {
		r, _ := http.NewRequest(http.MethodPost, "http://x/mcp", nil)
		r.Host = tc.host
		for k, v := range tc.hdr {
			r.Header.Set(k, v)
		}
		v := tc.a.Decide(r)
		got, msg, who := v.Status, v.Msg, v.Who
		if got != tc.status {
			t.Errorf("%s: status %d (%s), want %d", tc.name, got, msg, tc.status)
		}
		want := tc.principal
		if want == "" && tc.status == 0 {
			want = "http"
		}
		if who.ID() != want {
			t.Errorf("%s: principal %q, want %q", tc.name, who.ID(), want)
		}
	}
}
