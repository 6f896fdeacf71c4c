package hostserver

import (
	"net/http"
	"testing"

	"mcpx/internal/jsonrpc"
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
		got, msg, who := tc.a.check(r)
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

func TestParseAccept(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want accept
	}{
		{nil, accept{true, true}},
		{[]string{"application/json, text/event-stream"}, accept{true, true}},
		{[]string{"application/json"}, accept{true, false}},
		{[]string{"text/event-stream"}, accept{false, true}},
		{[]string{"*/*"}, accept{true, true}},
		{[]string{"text/html", "application/*;q=0.5"}, accept{true, false}},
		{[]string{"application/json;q=0, text/event-stream"}, accept{false, true}},
		{[]string{"text/html"}, accept{false, false}},
	} {
		if got := parseAccept(tc.in); got != tc.want {
			t.Errorf("parseAccept(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestDecodeHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                               "plain",
		"=?base64?SGVsbG8sIOS4lueVjA==?=":     "Hello, 世界",
		"=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=": "=?base64?literal?=",
		"=?base64?unterminated":               "=?base64?unterminated",
		"=?BASE64?SGk=?=":                     "=?BASE64?SGk=?=", // markers are case-sensitive
	} {
		if got, err := decodeHeaderValue(in); err != nil || got != want {
			t.Errorf("decodeHeaderValue(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := decodeHeaderValue("=?base64?not base64!?="); err == nil {
		t.Error("bad base64 accepted")
	}
}

// isResponse relies on how jsonrpc.Message.Encode writes messages.
func TestIsResponse(t *testing.T) {
	for _, tc := range []struct {
		m    *jsonrpc.Message
		want bool
	}{
		{jsonrpc.NewResult(jsonrpc.NewIntID(1), []byte(`{}`)), true},
		{jsonrpc.NewError(jsonrpc.NewStringID("a"), jsonrpc.Errorf(-1, "x")), true},
		{jsonrpc.NewError(jsonrpc.ID{}, jsonrpc.Errorf(-1, "x")), true},
		{jsonrpc.NewNotification("notifications/progress", []byte(`{"progress":1}`)), false},
	} {
		if got := isResponse(tc.m.Encode()); got != tc.want {
			t.Errorf("isResponse(%s) = %v", tc.m.Encode(), got)
		}
	}
}
