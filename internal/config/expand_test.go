package config

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	env := map[string]string{"HOME": "/home/u", "EMPTY": "", "REF": "${HOME}", "A_1": "a"}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	tests := []struct{ in, want, err string }{
		{in: "plain", want: "plain"},
		{in: "", want: ""},
		{in: "${HOME}/x", want: "/home/u/x"},
		{in: "a${HOME}b${A_1}c", want: "a/home/ubac"},
		{in: "${EMPTY}", want: ""},
		{in: "${MISSING:-def}", want: "def"},
		{in: "${EMPTY:-def}", want: "def"},
		{in: "${HOME:-def}", want: "/home/u"},
		{in: "${MISSING:-}", want: ""},
		{in: "${MISSING:-a b $ c:-d}", want: "a b $ c:-d"},
		{in: "${REF}", want: "${HOME}"}, // values are not scanned again
		{in: "$${HOME}", want: "${HOME}"},
		{in: "$${", want: "${"},
		{in: "x$${HOME}${HOME}", want: "x${HOME}/home/u"},
		{in: "$$${HOME}", want: "$${HOME}"},
		{in: "$HOME", want: "$HOME"},
		{in: "$", want: "$"},
		{in: "a$$b", want: "a$$b"},
		{in: "cost: $5 {x}", want: "cost: $5 {x}"},
		{in: "${MISSING}", err: "${MISSING} is not set"},
		{in: "x${HOME}${MISSING}", err: "${MISSING} is not set"},
		{in: "${", err: `unterminated "${" (write "$${" for a literal "${")`},
		{in: "${HOME", err: `unterminated "${" (write "$${" for a literal "${")`},
		{in: "${}", err: "invalid variable reference (want ${NAME} or ${NAME:-default})"},
		{in: "${1A}", err: "invalid variable reference (want ${NAME} or ${NAME:-default})"},
		{in: "${A B}", err: "invalid variable reference (want ${NAME} or ${NAME:-default})"},
		{in: "${A-b}", err: "invalid variable reference (want ${NAME} or ${NAME:-default})"},
		{in: "${A:-${B}}", err: `${A:-...}: a default cannot contain "${"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := expand(tt.in, lookup)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != tt.want || gotErr != tt.err {
				t.Errorf("expand(%q) = %q, %q; want %q, %q", tt.in, got, gotErr, tt.want, tt.err)
			}
		})
	}
}

// TestExpandFields checks which fields are expanded, and the field an
// expansion error names.
func TestExpandFields(t *testing.T) {
	c, err := parse(`{"mcpServers": {
		"p": {"command": "${HOME}/bin/x", "args": ["--token=${TOKEN}", "$${LIT}"], "env": {"T": "${TOKEN}"}, "cwd": "${HOME}/w"},
		"h": {"url": "https://h/${MISSING:-mcp}", "headers": {"Authorization": "Bearer ${TOKEN}"}}
	}}`)
	if err != nil {
		t.Fatal(err)
	}
	p, h := c.Servers["p"], c.Servers["h"]
	for _, tt := range []struct{ field, got, want string }{
		{"command", p.Command, "/home/u/bin/x"},
		{"args[0]", p.Args[0], "--token=tok-SECRET-123"},
		{"args[1]", p.Args[1], "${LIT}"},
		{"env.T", p.Env["T"], "tok-SECRET-123"},
		{"cwd", p.Cwd, "/home/u/w"},
		{"url", h.URL, "https://h/mcp"},
		{"headers.Authorization", h.Headers["Authorization"], "Bearer tok-SECRET-123"},
	} {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.field, tt.got, tt.want)
		}
	}

	_, err = parse(`{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"TOKEN": "${GITHUB_TOKEN}"}}}}`)
	if got, want := errString(err), "config "+testFile+": mcpServers.gh.env.TOKEN: ${GITHUB_TOKEN} is not set"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
	// Names, types and settings are never expanded.
	_, err = parse(`{"mcpServers": {"s": {"command": "x", "protocolVersion": "${V}"}}}`)
	if got, want := errString(err), "config "+testFile+`: mcpServers.s.protocolVersion: unknown protocol version "${V}" (want auto or one of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28)`; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
}

// TestSecretsStayOutOfErrors fails fields after expansion, with the secret
// in the value, and checks that no message shows it.
func TestSecretsStayOutOfErrors(t *testing.T) {
	const secret = "hunter2-SECRET"
	env := map[string]string{"S": secret, "NL": secret + "\nX-Evil: 1", "NUL": secret + "\x00"}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	tests := []struct{ name, data, want string }{
		{"bad url", srv(`{"url": "ftp://${S}@h"}`), "mcpServers.s.url: must be an absolute http or https URL"},
		{"unparsable url", srv(`{"url": "http://h:${S}/"}`), "mcpServers.s.url: must be an absolute http or https URL"},
		{"header with newline", srv(`{"url": "http://h", "headers": {"A": "${NL}"}}`), "mcpServers.s.headers.A: must not contain a line break or NUL"},
		{"command with NUL", srv(`{"command": "${NUL}"}`), "mcpServers.s.command: must not contain a NUL byte"},
		{"arg with NUL", srv(`{"command": "x", "args": ["${NUL}"]}`), "mcpServers.s.args[0]: must not contain a NUL byte"},
		{"env with NUL", srv(`{"command": "x", "env": {"E": "${NUL}"}}`), "mcpServers.s.env.E: must not contain a NUL byte"},
		{"cwd with NUL", srv(`{"command": "x", "cwd": "${NUL}"}`), "mcpServers.s.cwd: must not contain a NUL byte"},
		{"later field fails", srv(`{"command": "${S}", "args": ["${UNSET}"]}`), "mcpServers.s.args[0]: ${UNSET} is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.data), testFile, &LoadOptions{Lookup: lookup})
			got := errString(err)
			if want := "config " + testFile + ": " + tt.want; got != want {
				t.Errorf("error = %q, want %q", got, want)
			}
			if strings.Contains(got, "SECRET") {
				t.Errorf("error %q shows the secret", got)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
