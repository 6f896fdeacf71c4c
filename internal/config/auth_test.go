package config

import (
	"strings"
	"testing"
)

func TestAuth(t *testing.T) {
	const ok = `{"mcpServers":{},"mcpx":{"auth":{
		"issuers":["https://idp.example.com/","http://127.0.0.1:9000"],
		"audience":"https://mcpx.example.com/mcp","scopes":["mcpx"],"groupsClaim":"roles",
		"introspection":{"url":"https://idp.example.com/introspect","clientId":"mcpx","clientSecret":"${SECRET}"},
		"groups":{"eng":{"tools":["files__*"]},"ops":{"admin":true}}}}}`
	c, err := Parse([]byte(ok), "", &LoadOptions{Lookup: func(k string) (string, bool) { return "s3cret", k == "SECRET" }})
	if err != nil {
		t.Fatal(err)
	}
	a := c.Auth
	if !a.Enabled() || len(a.Issuers) != 2 || a.Audience != "https://mcpx.example.com/mcp" || a.NameClaim != "name" || a.GroupsClaim != "roles" ||
		a.Introspection.ClientSecret != "s3cret" || a.Groups["eng"].Tools == nil || a.Groups["eng"].Admin || !a.Groups["ops"].Admin || a.Groups["ops"].Tools != nil {
		t.Errorf("parsed %+v", a)
	}
	if d, _ := Parse([]byte(`{"mcpServers":{}}`), "", nil); d.Auth.Enabled() {
		t.Error("no auth block, but Enabled")
	}
	for _, tc := range []struct{ auth, field, msg string }{
		{`{"audience":"https://m/mcp"}`, "mcpx.auth.issuers", "is required"},
		{`{"issuers":[],"audience":"https://m/mcp"}`, "mcpx.auth.issuers", "at least one"},
		{`{"issuers":["http://idp.example.com"],"audience":"https://m/mcp"}`, "mcpx.auth.issuers[0]", "https"},
		{`{"issuers":["idp"],"audience":"https://m/mcp"}`, "mcpx.auth.issuers[0]", "absolute https URL"},
		{`{"issuers":["https://i"]}`, "mcpx.auth.audience", "resource URL"},
		{`{"issuers":["https://i"],"audience":"https://m/mcp#x"}`, "mcpx.auth.audience", "no query, fragment"},
		{`{"issuers":["https://i"],"audience":"https://m/mcp","scopes":["a b"]}`, "mcpx.auth.scopes[0]", "no space"},
		{`{"issuers":["https://i"],"audience":"https://m/mcp","nameClaim":""}`, "mcpx.auth.nameClaim", "must name a claim"},
		{`{"issuers":["https://i"],"audience":"https://m/mcp","introspection":{"url":"https://i/x","clientId":"c"}}`, "mcpx.auth.introspection.clientSecret", "is required"},
		{`{"issuers":["https://i"],"audience":"https://m/mcp","introspection":{"url":"ftp://i/x","clientId":"c","clientSecret":"s"}}`, "mcpx.auth.introspection.url", "introspection endpoint"},
		{`{"issuers":["https://i"],"audience":"https://m/mcp","groups":{"eng":{"tools":[]}}}`, "mcpx.auth.groups.eng.tools", "is empty"},
		{`{"issuers":["https://i"],"audience":"https://m/mcp","groups":{"eng":{"admn":true}}}`, "mcpx.auth.groups.eng.admn", "did you mean \"admin\""},
		{`{"issuers":["https://i"],"audience":"https://m/mcp","issuer":"x"}`, "mcpx.auth.issuer", "unknown field"},
		{`{"issuers":["https://i"],"audience":"https://m/mcp","groups":{"eng":{"background":"no"}}}`, "mcpx.auth.groups.eng.background", ""},
	} {
		_, err := Parse([]byte(`{"mcpServers":{},"mcpx":{"auth":`+tc.auth+`}}`), "", nil)
		var e *Error
		if err == nil || !asError(err, &e) || e.Field != tc.field || !strings.Contains(e.Msg, tc.msg) {
			t.Errorf("auth %s: %v; want %s: ...%s...", tc.auth, err, tc.field, tc.msg)
		}
	}
}

// TestGroupBackground: a group may start jobs unless it says
// background: false; a person may if one of their named groups may.
func TestGroupBackground(t *testing.T) {
	c, err := Parse([]byte(`{"mcpServers":{},"mcpx":{"auth":{"issuers":["https://i"],"audience":"https://m/mcp",
		"groups":{"eng":{"tools":["a__*"]},"guests":{"background":false},"ops":{"admin":true,"background":false}}}}}`), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		groups []string
		want   bool
	}{{[]string{"eng"}, true}, {[]string{"guests"}, false}, {[]string{"guests", "eng"}, true}, {[]string{"other"}, false}, {nil, false}, {[]string{"ops"}, false}} {
		if got := c.GroupBackground(tc.groups); got != tc.want {
			t.Errorf("groups %q: background %v, want %v", tc.groups, got, tc.want)
		}
	}
	none, _ := Parse([]byte(`{"mcpServers":{},"mcpx":{"auth":{"issuers":["https://i"],"audience":"https://m/mcp"}}}`), "", nil)
	if !none.GroupBackground(nil) {
		t.Error("with no groups named, a person may not start jobs")
	}
}

func asError(err error, e **Error) bool {
	x, ok := err.(*Error)
	*e = x
	return ok
}
