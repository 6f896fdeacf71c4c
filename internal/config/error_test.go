package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// srv wraps one server entry "s" in a file.
func srv(body string) string { return `{"mcpServers": {"s": ` + body + `}}` }

func TestParseErrors(t *testing.T) {
	const f = "config " + testFile + ": "
	tests := []parseErrorCase{
		// Top level.
		{"unknown top-level key", `{"servers": {}}`, f + `servers: unknown field`},
		{"top-level typo hint", `{"mcpServer": {}}`, f + `mcpServer: unknown field (did you mean "mcpServers"?)`},
		{"top level not an object", "\n  [1]", f[:len(f)-2] + `:2:3: must be a JSON object at the top level`},
		{"empty file", " \n", f + `file is empty (want a JSON object)`},
		{"duplicate top-level key", `{"mcpx": {}, "mcpx": {}}`, f + `mcpx: duplicate key`},
		{"mcpServers not an object", `{"mcpServers": []}`, f + `mcpServers: must be an object`},
		{"duplicate server", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, f + `mcpServers.a: duplicate key`},

		// Server names.
		{"reserved name", `{"mcpServers": {"mcpx": {"command": "x"}}}`, f + `mcpServers.mcpx: the server name "mcpx" is reserved for mcpx's own tools`},
		{"reserved name any case", `{"mcpServers": {"MCPX": {"command": "x"}}}`, f + `mcpServers.MCPX: the server name "MCPX" is reserved for mcpx's own tools`},
		{"name with space", `{"mcpServers": {"a b": {"command": "x"}}}`, f + `mcpServers["a b"]: invalid server name: want 1 to 48 characters of [A-Za-z0-9_-]`},
		{"name with dot", `{"mcpServers": {"a.b": {"command": "x"}}}`, f + `mcpServers["a.b"]: invalid server name: want 1 to 48 characters of [A-Za-z0-9_-]`},
		{"empty name", `{"mcpServers": {"": {"command": "x"}}}`, f + `mcpServers[""]: invalid server name: want 1 to 48 characters of [A-Za-z0-9_-]`},
		{"name too long", `{"mcpServers": {"` + strings.Repeat("a", 49) + `": {"command": "x"}}}`, f + `mcpServers.` + strings.Repeat("a", 49) + `: invalid server name: want 1 to 48 characters of [A-Za-z0-9_-]`},
		{"non-ascii name", `{"mcpServers": {"café": {"command": "x"}}}`, f + `mcpServers["café"]: invalid server name: want 1 to 48 characters of [A-Za-z0-9_-]`},
		{"name contains separator", `{"mcpServers": {"my__srv": {"command": "x"}}}`, f + `mcpServers.my__srv: server name contains the tool name separator "__" (rename the server or change mcpx.toolNames.separator)`},
		{"name contains custom separator", `{"mcpx": {"toolNames": {"separator": "-"}}, "mcpServers": {"my-srv": {"command": "x"}}}`, f + `mcpServers.my-srv: server name contains the tool name separator "-" (rename the server or change mcpx.toolNames.separator)`},

		// Server shape and transport.
		{"server not an object", srv(`"x"`), f + `mcpServers.s: must be an object`},
		{"unknown server field", srv(`{"command": "x", "comand": "y"}`), f + `mcpServers.s.comand: unknown field (did you mean "command"?)`},
		{"unknown server field, no hint", srv(`{"command": "x", "autoApprove": []}`), f + `mcpServers.s.autoApprove: unknown field`},
		{"neither command nor url", srv(`{}`), f + `mcpServers.s: command or url is required`},
		{"both command and url", srv(`{"command": "x", "url": "http://h"}`), f + `mcpServers.s: has both command and url (a server is either stdio, with command, or http, with url)`},
		{"unknown type", srv(`{"type": "websocket", "url": "ws://h"}`), f + `mcpServers.s.type: unknown transport "websocket" (want stdio, http, streamable-http or sse)`},
		{"type not a string", srv(`{"type": 1, "url": "http://h"}`), f + `mcpServers.s.type: must be a string`},
		{"stdio without command", srv(`{"type": "stdio", "args": []}`), f + `mcpServers.s: command is required for a stdio server`},
		{"http without url", srv(`{"type": "http"}`), f + `mcpServers.s: url is required for an http server`},
		{"sse without url", srv(`{"type": "sse", "command": "x"}`), f + `mcpServers.s: url is required for an sse server`},
		{"args on http", srv(`{"url": "http://h", "args": ["a"]}`), f + `mcpServers.s.args: not allowed for an http server`},
		{"env on sse", srv(`{"type": "sse", "url": "http://h", "env": {}}`), f + `mcpServers.s.env: not allowed for an sse server`},
		{"cwd on http", srv(`{"type": "http", "url": "http://h", "cwd": "/"}`), f + `mcpServers.s.cwd: not allowed for an http server`},
		{"command on typed http", srv(`{"type": "http", "command": "x", "url": "http://h"}`), f + `mcpServers.s.command: not allowed for an http server`},
		{"headers on stdio", srv(`{"command": "x", "headers": {}}`), f + `mcpServers.s.headers: not allowed for a stdio server`},
		{"oauth on stdio", srv(`{"command": "x", "oauth": {}}`), f + `mcpServers.s.oauth: not allowed for a stdio server`},
		{"oauth unknown field", srv(`{"url": "http://h", "oauth": {"clientID": "a"}}`), f + `mcpServers.s.oauth.clientID: unknown field (did you mean "clientId"?)`},
		{"oauth redirect not loopback", srv(`{"url": "http://h", "oauth": {"redirectUri": "http://example.com:8080/cb"}}`), f + `mcpServers.s.oauth.redirectUri: must be an http URL on a loopback address with a port (127.0.0.1, [::1] or localhost): mcpx receives the redirect itself`},
		{"oauth redirect without port", srv(`{"url": "http://h", "oauth": {"redirectUri": "http://127.0.0.1/cb"}}`), f + `mcpServers.s.oauth.redirectUri: must be an http URL on a loopback address with a port (127.0.0.1, [::1] or localhost): mcpx receives the redirect itself`},
		{"oauth metadata url not https", srv(`{"url": "http://h", "oauth": {"clientMetadataUrl": "http://x/c.json"}}`), f + `mcpServers.s.oauth.clientMetadataUrl: must be an https URL with a path`},
		{"oauth secret without id", srv(`{"url": "http://h", "oauth": {"clientSecret": "s"}}`), f + `mcpServers.s.oauth: clientSecret needs clientId`},
		{"oauth accounts unknown", srv(`{"url": "http://h", "oauth": {"accounts": "team"}}`), f + `mcpServers.s.oauth.accounts: must be "shared" or "per-person"`},
		{"oauth identity header on shared", srv(`{"url": "http://h", "oauth": {"identityHeader": "X-User"}}`), f + `mcpServers.s.oauth: identityHeader needs accounts "per-person": a shared session carries no one's identity`},
		{"oauth identity header not a name", srv(`{"url": "http://h", "oauth": {"accounts": "per-person", "identityHeader": "X User"}}`), f + `mcpServers.s.oauth.identityHeader: must be an HTTP header name`},
		{"token exchange on shared", srv(`{"url": "http://h", "oauth": {"tokenExchange": {"tokenEndpoint": "https://idp/token", "clientId": "c", "audience": "a"}}}`), f + `mcpServers.s.oauth: tokenExchange needs accounts "per-person": it exchanges a person's own token`},
		{"token exchange no endpoint", srv(`{"url": "http://h", "oauth": {"accounts": "per-person", "tokenExchange": {"clientId": "c", "audience": "a"}}}`), f + `mcpServers.s.oauth.tokenExchange: tokenEndpoint or issuer is required: the identity provider's token endpoint, or its issuer to discover it from`},
		{"token exchange endpoint and issuer", srv(`{"url": "http://h", "oauth": {"accounts": "per-person", "tokenExchange": {"tokenEndpoint": "https://idp/token", "issuer": "https://idp", "clientId": "c", "audience": "a"}}}`), f + `mcpServers.s.oauth.tokenExchange: tokenEndpoint and issuer exclude each other: the endpoint is discovered from the issuer`},
		{"token exchange plain http issuer", srv(`{"url": "http://h", "oauth": {"accounts": "per-person", "tokenExchange": {"issuer": "http://idp.example", "clientId": "c", "audience": "a"}}}`), f + `mcpServers.s.oauth.tokenExchange.issuer: must be the identity provider's issuer: an https URL (http only on a loopback address), without a query or fragment`},
		{"token exchange plain http", srv(`{"url": "http://h", "oauth": {"accounts": "per-person", "tokenExchange": {"tokenEndpoint": "http://idp.example/token", "clientId": "c", "audience": "a"}}}`), f + `mcpServers.s.oauth.tokenExchange.tokenEndpoint: must be an https URL (http only on a loopback address), without a query or fragment`},
		{"token exchange no client", srv(`{"url": "http://h", "oauth": {"accounts": "per-person", "tokenExchange": {"tokenEndpoint": "https://idp/token", "audience": "a"}}}`), f + `mcpServers.s.oauth.tokenExchange: clientId is required: the client the identity provider lets exchange tokens`},
		{"token exchange no audience", srv(`{"url": "http://h", "oauth": {"accounts": "per-person", "tokenExchange": {"tokenEndpoint": "https://idp/token", "clientId": "c"}}}`), f + `mcpServers.s.oauth.tokenExchange: audience or resource is required: it names the upstream the token is for`},
		{"token exchange bad resource", srv(`{"url": "http://h", "oauth": {"accounts": "per-person", "tokenExchange": {"tokenEndpoint": "https://idp/token", "clientId": "c", "resource": "up#x"}}}`), f + `mcpServers.s.oauth.tokenExchange.resource: must be an absolute URI without a fragment (RFC 8707)`},
		{"token exchange typo", srv(`{"url": "http://h", "oauth": {"accounts": "per-person", "tokenExchange": {"tokenEndpoint": "https://idp/token", "clientId": "c", "audiance": "a"}}}`), f + `mcpServers.s.oauth.tokenExchange.audiance: unknown field (did you mean "audience"?)`},
		{"oauth identity header authorization", srv(`{"url": "http://h", "oauth": {"accounts": "per-person", "identityHeader": "authorization"}}`), f + `mcpServers.s.oauth.identityHeader: must not be Authorization or an MCP header`},
		{"per-person with authorization header", srv(`{"url": "http://h", "headers": {"Authorization": "Bearer x"}, "oauth": {"accounts": "per-person"}}`), f + `mcpServers.s: a per-person server (oauth.accounts) cannot set an Authorization header: each person's own sign-in is sent`},
		{"public url with query", `{"mcpx": {"http": {"publicUrl": "https://gw.example?x=1"}}}`, f + `mcpx.http.publicUrl: must be an http or https URL with a host and no query`},
		{"url on typed stdio", srv(`{"type": "stdio", "command": "x", "url": "http://h"}`), f + `mcpServers.s.url: not allowed for a stdio server`},
		{"disabled not bool", srv(`{"command": "x", "disabled": "yes"}`), f + `mcpServers.s.disabled: must be true or false`},
		{"disabled is validated", srv(`{"command": "", "disabled": true}`), f + `mcpServers.s.command: must not be empty`},
		{"unknown protocol version", srv(`{"command": "x", "protocolVersion": "2025-01-01"}`), f + `mcpServers.s.protocolVersion: unknown protocol version "2025-01-01" (want auto or one of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28)`},
		{"protocol version not a string", srv(`{"command": "x", "protocolVersion": 2025}`), f + `mcpServers.s.protocolVersion: must be a string`},

		// Stdio fields.
		{"command not a string", srv(`{"command": ["x"]}`), f + `mcpServers.s.command: must be a string`},
		{"empty command", srv(`{"command": ""}`), f + `mcpServers.s.command: must not be empty`},
		{"command empty after expansion", srv(`{"command": "${EMPTY}"}`), f + `mcpServers.s.command: must not be empty`},
		{"command with NUL", srv(`{"command": "a\u0000b"}`), f + `mcpServers.s.command: must not contain a NUL byte`},
		{"args not an array", srv(`{"command": "x", "args": "a b"}`), f + `mcpServers.s.args: must be an array of strings`},
		{"arg not a string", srv(`{"command": "x", "args": ["a", 1]}`), f + `mcpServers.s.args[1]: must be a string`},
		{"env not an object", srv(`{"command": "x", "env": ["A=1"]}`), f + `mcpServers.s.env: must be an object`},
		{"env value not a string", srv(`{"command": "x", "env": {"A": 1}}`), f + `mcpServers.s.env.A: must be a string`},
		{"env name with =", srv(`{"command": "x", "env": {"A=B": "1"}}`), f + `mcpServers.s.env["A=B"]: invalid variable name (must be non-empty, without "=" or NUL)`},
		{"env name empty", srv(`{"command": "x", "env": {"": "1"}}`), f + `mcpServers.s.env[""]: invalid variable name (must be non-empty, without "=" or NUL)`},
		{"env duplicate", srv(`{"command": "x", "env": {"A": "1", "A": "2"}}`), f + `mcpServers.s.env.A: duplicate key`},
		{"cwd empty", srv(`{"command": "x", "cwd": ""}`), f + `mcpServers.s.cwd: must not be empty`},
		{"cwd not a string", srv(`{"command": "x", "cwd": null}`), f + `mcpServers.s.cwd: must be a string`},

		// HTTP fields.
		{"url not a string", srv(`{"url": 1}`), f + `mcpServers.s.url: must be a string`},
		{"url relative", srv(`{"url": "/mcp"}`), f + `mcpServers.s.url: must be an absolute http or https URL`},
		{"url wrong scheme", srv(`{"url": "ftp://h/x"}`), f + `mcpServers.s.url: must be an absolute http or https URL`},
		{"url unparsable", srv(`{"url": "http://h:port/x"}`), f + `mcpServers.s.url: must be an absolute http or https URL`},
		{"url without host", srv(`{"url": "https:///x"}`), f + `mcpServers.s.url: must be an absolute http or https URL`},
		{"headers not an object", srv(`{"url": "http://h", "headers": "A: b"}`), f + `mcpServers.s.headers: must be an object`},
		{"header value not a string", srv(`{"url": "http://h", "headers": {"A": true}}`), f + `mcpServers.s.headers.A: must be a string`},
		{"header name invalid", srv(`{"url": "http://h", "headers": {"A B": "x"}}`), f + `mcpServers.s.headers["A B"]: invalid header name`},
		{"header name with colon", srv(`{"url": "http://h", "headers": {"A:": "x"}}`), f + `mcpServers.s.headers["A:"]: invalid header name`},
		{"header value with newline", srv(`{"url": "http://h", "headers": {"A": "x\r\nB: y"}}`), f + `mcpServers.s.headers.A: must not contain a line break or NUL`},
		{"maxConcurrentRequests zero", srv(`{"url": "http://h", "maxConcurrentRequests": 0}`), f + `mcpServers.s.maxConcurrentRequests: must be an integer between 1 and 10000`},
		{"maxConcurrentRequests too large", srv(`{"url": "http://h", "maxConcurrentRequests": 10001}`), f + `mcpServers.s.maxConcurrentRequests: must be an integer between 1 and 10000`},
		{"maxConcurrentRequests fractional", srv(`{"type": "sse", "url": "http://h", "maxConcurrentRequests": 2.5}`), f + `mcpServers.s.maxConcurrentRequests: must be an integer between 1 and 10000`},
		{"maxConcurrentRequests on stdio", srv(`{"command": "x", "maxConcurrentRequests": 4}`), f + `mcpServers.s.maxConcurrentRequests: not allowed for a stdio server`},
		{"header duplicate by case", srv(`{"url": "http://h", "headers": {"Authorization": "a", "authorization": "b"}}`), f + `mcpServers.s.headers.authorization: duplicate header (names are case-insensitive)`},

		// The mcpx block.
		{"mcpx not an object", `{"mcpx": 1}`, f + `mcpx: must be an object`},
		{"unknown mcpx field", `{"mcpx": {"idleTimout": "1s"}}`, f + `mcpx.idleTimout: unknown field (did you mean "idleTimeout"?)`},
		{"toolNames not an object", `{"mcpx": {"toolNames": "auto"}}`, f + `mcpx.toolNames: must be an object`},
		{"unknown toolNames field", `{"mcpx": {"toolNames": {"sep": "_"}}}`, f + `mcpx.toolNames.sep: unknown field`},
		{"bad prefix", `{"mcpx": {"toolNames": {"prefix": "never"}}}`, f + `mcpx.toolNames.prefix: must be "always" or "auto"`},
		{"prefix not a string", `{"mcpx": {"toolNames": {"prefix": true}}}`, f + `mcpx.toolNames.prefix: must be a string`},
		{"empty separator", `{"mcpx": {"toolNames": {"separator": ""}}}`, f + `mcpx.toolNames.separator: must be 1 to 4 characters of [A-Za-z0-9_.-]`},
		{"long separator", `{"mcpx": {"toolNames": {"separator": "_____"}}}`, f + `mcpx.toolNames.separator: must be 1 to 4 characters of [A-Za-z0-9_.-]`},
		{"separator with slash", `{"mcpx": {"toolNames": {"separator": "/"}}}`, f + `mcpx.toolNames.separator: must be 1 to 4 characters of [A-Za-z0-9_.-]`},
		{"maxMessageBytes too small", `{"mcpx": {"maxMessageBytes": 1023}}`, f + `mcpx.maxMessageBytes: must be an integer between 1024 and 1073741824`},
		{"maxMessageBytes too large", `{"mcpx": {"maxMessageBytes": 1073741825}}`, f + `mcpx.maxMessageBytes: must be an integer between 1024 and 1073741824`},
		{"maxMessageBytes fractional", `{"mcpx": {"maxMessageBytes": 2048.5}}`, f + `mcpx.maxMessageBytes: must be an integer between 1024 and 1073741824`},
		{"maxMessageBytes string", `{"mcpx": {"maxMessageBytes": "16MiB"}}`, f + `mcpx.maxMessageBytes: must be an integer between 1024 and 1073741824`},
		{"maxConcurrentCalls negative", `{"mcpx": {"maxConcurrentCalls": -1}}`, f + `mcpx.maxConcurrentCalls: must be an integer between 0 and 1000000`},
		{"duration type", `{"mcpx": {"probeTimeout": true}}`, f + `mcpx.probeTimeout: must be a duration such as "90s" or "5m", or a number of seconds`},
		{"server duration", srv(`{"command": "x", "maxTimeout": "-1s"}`), f + `mcpServers.s.maxTimeout: must not be negative`},
	}
	checkParseErrors(t, tests)
}

// TestErrorPosition checks line:col of syntax errors, and that field errors
// locate their value (or key) without printing the position.
func TestErrorPosition(t *testing.T) {
	tests := []struct {
		name, data string
		want       Error
	}{
		{"trailing comma", "{\n  \"mcpx\": {\n    \"idleTimeout\": \"1s\",}\n}",
			Error{Line: 3, Col: 25, Msg: "invalid character '}' looking for beginning of object key string"}},
		{"unexpected end", "{\"mcpx\": {", Error{Line: 1, Col: 11, Msg: "unexpected end of JSON input"}},
		{"after top-level value", "{}\n{}", Error{Line: 2, Col: 1, Msg: "invalid character '{' after top-level value"}},
		{"bad literal", "{\"mcpx\": tru}", Error{Line: 1, Col: 13, Msg: "invalid character '}' in literal true (expecting 'e')"}},
		{"control character", "{\"a\n\": 1}", Error{Line: 1, Col: 4, Msg: `invalid character '\n' in string literal`}},
		{"byte order mark is skipped", "\uFEFF{,}", Error{Line: 1, Col: 2, Msg: "invalid character ',' looking for beginning of object key string"}},
		{"field value", "{\"mcpServers\": {\n  \"s\": {\"command\": \"x\",\n    \"args\": [\"a\", 2]}}}",
			Error{Field: "mcpServers.s.args[1]", Line: 3, Col: 19, Msg: "must be a string"}},
		{"unknown key", "{\"mcpx\": {\n\t\"bad\": 1}}", Error{Field: "mcpx.bad", Line: 2, Col: 2, Msg: "unknown field"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(tt.data)
			var got *Error
			if !errors.As(err, &got) {
				t.Fatalf("Parse error = %v, want *config.Error", err)
			}
			tt.want.File = testFile
			if diff := cmp.Diff(&tt.want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Err" }, cmp.Ignore())); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{File: "/x.json", Field: "mcpServers.demo.args[1]", Line: 4, Col: 9, Msg: "must be a string"}, "config /x.json: mcpServers.demo.args[1]: must be a string"},
		{Error{File: "/x.json", Line: 3, Col: 14, Msg: "invalid character"}, "config /x.json:3:14: invalid character"},
		{Error{Line: 3, Col: 14, Msg: "invalid character"}, "config line 3:14: invalid character"},
		{Error{Field: "mcpx", Msg: "must be an object"}, "config: mcpx: must be an object"},
		{Error{File: "/x.json", Msg: "no such file or directory"}, "config /x.json: no such file or directory"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.json")
	if err := os.WriteFile(file, []byte(`{"mcpServers": {"a": {"command": "x", "cwd": "work"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	c, err := Load("config.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.File != file {
		t.Errorf("File = %q, want %q", c.File, file)
	}
	if got, want := c.Servers["a"].Cwd, filepath.Join(dir, "work"); got != want {
		t.Errorf("Cwd = %q, want %q", got, want)
	}

	missing := filepath.Join(dir, "missing.json")
	_, err = Load(missing, nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want fs.ErrNotExist", err)
	}
	if got, want := err.Error(), "config "+missing+": no such file or directory"; got != want {
		t.Errorf("Load(missing) error = %q, want %q", got, want)
	}
}

func TestUnnamedInputCwd(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	c, err := Parse([]byte(srv(`{"command": "x", "cwd": "sub"}`)), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Servers["s"].Cwd, filepath.Join(dir, "sub"); got != want {
		t.Errorf("Cwd = %q, want %q", got, want)
	}
}

// parseErrorCase is a config that parse must refuse, and the error it
// must give.
type parseErrorCase struct{ name, data, want string }

// checkParseErrors runs each case as a subtest: parse fails with exactly
// want, as a *Error.
func checkParseErrors(t *testing.T, tests []parseErrorCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parse(tt.data)
			if err == nil {
				t.Fatalf("Parse succeeded with %d servers, want error %q", len(c.Servers), tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("error is %T, want *config.Error", err)
			}
		})
	}
}
