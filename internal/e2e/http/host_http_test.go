package http

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestHTTPSecurity: a foreign Host (DNS rebinding) or Origin is refused with
// 403 before the token is even looked at; a missing or wrong token is 401
// with WWW-Authenticate: Bearer; localhost, 127.0.0.1 and a loopback origin
// are admitted with the token.
func TestHTTPSecurity(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		m := harness.StartHTTP(t, e, mode, cfg, false)
		h := harness.NewRawHost(t, m)
		port := m.URL[strings.LastIndex(m.URL, ":")+1 : strings.LastIndex(m.URL, "/")]
		for _, tc := range []struct {
			name   string
			hdr    map[string]string
			status int
		}{
			{"rebinding host", map[string]string{"Host": "evil.example.com:" + port}, 403},
			{"rebinding host without token", map[string]string{"Host": "evil.example.com:" + port, "Authorization": ""}, 403},
			{"other port", map[string]string{"Host": "127.0.0.1:1"}, 403},
			{"foreign origin", map[string]string{"Origin": "https://evil.example.com"}, 403},
			{"null origin", map[string]string{"Origin": "null"}, 403},
			{"foreign origin without token", map[string]string{"Origin": "https://evil.example.com", "Authorization": ""}, 403},
			{"no token", map[string]string{"Authorization": ""}, 401},
			{"wrong token", map[string]string{"Authorization": "Bearer " + strings.Repeat("x", len(m.Token))}, 401},
			{"token as basic", map[string]string{"Authorization": "Basic " + m.Token}, 401},
			{"localhost host", map[string]string{"Host": "localhost:" + port}, 200},
			{"ipv6 loopback host", map[string]string{"Host": "[::1]:" + port}, 200},
			{"loopback origin", map[string]string{"Origin": "http://localhost:6274"}, 200},
			{"lower-case bearer", map[string]string{"Authorization": "bearer " + m.Token}, 200},
		} {
			t.Run(tc.name, func(t *testing.T) {
				hdr := harness.ModernHeaders("server/discover", "")
				for k, v := range tc.hdr {
					hdr[k] = v
				}
				r := h.Do(harness.ModernDiscover, hdr)
				if r.Status != tc.status {
					t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
				}
				switch tc.status {
				case 401:
					if got := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
						t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", got)
					}
					fallthrough
				case 403:
					if len(r.Msgs) != 1 || r.Msgs[0].Error == nil {
						t.Errorf("body %s, want a JSON-RPC error", r.Body)
					}
					if strings.Contains(r.Body, m.Token) {
						t.Errorf("the refusal shows the token: %s", r.Body)
					}
				case 200:
					if len(r.Msgs) != 1 || r.Msgs[0].Error != nil {
						t.Errorf("body %s, want server/discover's result", r.Body)
					}
				}
			})
		}
	})
}

// TestHTTPTokenNone: --token none serves without a token on a loopback
// address and is a usage error (exit 2) on any other; --token takes no
// other value.
func TestHTTPTokenNone(t *testing.T) {
	t.Parallel()
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	for _, args := range [][]string{
		{"--http", "0.0.0.0:0", "--token", "none"},
		{"--http", "192.0.2.1:0", "--token", "none"},
		{"--http", "[::]:0", "--token", "none"},
		{"--http", "127.0.0.1:0", "--token", "secret"},
		{"--token", "none"},
		{"--http", "example.com:80"},
	} {
		_, stderr, code := e.Run(30*time.Second, append([]string{"serve", "--config", cfg}, args...)...)
		if code != 2 {
			t.Errorf("mcpx serve %v: exit %d, want 2 (usage); stderr:\n%s", args, code, stderr)
		}
		if !strings.HasSuffix(stderr, " (see mcpx serve --help)\n") {
			t.Errorf("mcpx serve %v: no pointer to the help in stderr:\n%s", args, stderr)
		}
	}
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) { // one Env: one mode at a time
		m := harness.StartHTTP(t, e, mode, cfg, true)
		h := harness.NewRawHost(t, m)
		r := h.Do(harness.ModernDiscover, harness.ModernHeaders("server/discover", ""))
		if r.Status != 200 || len(r.Msgs) != 1 || r.Msgs[0].Error != nil {
			t.Fatalf("without a token: %d %s, want 200 and a result", r.Status, r.Body)
		}
		// Host and Origin are checked all the same.
		if r := h.Do(harness.ModernDiscover, map[string]string{"Host": "evil.example.com", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}); r.Status != 403 {
			t.Errorf("foreign Host with --token none: %d, want 403", r.Status)
		}
	})
}

// TestHTTPBadInput: every malformed or misdirected request gets the status
// and JSON-RPC error its revision prescribes.
func TestHTTPBadInput(t *testing.T) {
	t.Parallel()
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"maxMessageBytes": 4096}, mcpxtest.Demo{Name: "demo"})
		m := harness.StartHTTP(t, e, mode, cfg, false)
		legacy := harness.NewRawHost(t, m)
		legacy.Initialize("2025-11-25")
		modern := harness.NewRawHost(t, m)
		meta := harness.ModernMeta(nil)
		echo := func(id any) string { return harness.CallBody(id, "demo__echo", map[string]any{"k": 1}, meta) }
		odd := "déjà vu"
		oddBody := harness.JsonText(map[string]any{"jsonrpc": "2.0", "id": 30, "method": "tools/call", "params": map[string]any{"name": odd, "_meta": meta}})

		for _, tc := range []struct {
			name   string
			host   *harness.RawHost
			body   string
			hdr    map[string]string
			status int
			code   int64  // JSON-RPC error code; 0: a result or no body
			id     string // the error's id, exactly
			hasMsg string // a part of the error message
		}{
			// Transport.
			{"wrong content type", modern, harness.ModernDiscover, map[string]string{"Content-Type": "text/plain"}, 415, -32600, "null", "Content-Type"},
			{"accepts neither type", modern, harness.ModernDiscover, map[string]string{"Accept": "text/html"}, 406, -32600, "null", "Accept"},
			{"GET in 2026-07-28", nil, "", map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, 405, -32600, "null", "GET"},
			{"too large", modern, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}`, harness.ModernHeaders("ping", ""), 413, -32600, "null", "4096 bytes"},
			{"not JSON", modern, `{"jsonrpc":"2.0",`, harness.ModernHeaders("tools/list", ""), 400, -32700, "null", "parse error"},
			{"batch", legacy, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil, 400, -32600, "null", "batch"},
			{"invalid request", legacy, `{"jsonrpc":"1.0","id":5,"method":"ping"}`, nil, 400, -32600, "5", "jsonrpc"},

			// Legacy sessions.
			{"no session", modern, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil, 400, -32600, "2", "Mcp-Session-Id"},
			{"no session, legacy header", modern, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "2025-06-18"}, 400, -32600, "2", "Mcp-Session-Id"},
			{"unknown session", modern, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": "0123456789abcdef0123456789abcdef"}, 404, -32600, "3", "session"},
			{"session, unsupported header", legacy, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, 400, -32600, "4", "1999-01-01"},
			{"session, unknown method", legacy, `{"jsonrpc":"2.0","id":6,"method":"prompts/list"}`, nil, 200, -32601, "6", "prompts/list"},
			{"session, older header", legacy, `{"jsonrpc":"2.0","id":7,"method":"ping"}`, map[string]string{"Mcp-Protocol-Version": "2025-03-26"}, 200, 0, "", ""},
			{"session, notification", legacy, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, nil, 202, 0, "", ""},
			{"session, cancel of nothing", legacy, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`, nil, 202, 0, "", ""},
			{"session, response", legacy, `{"jsonrpc":"2.0","id":"s1","result":{}}`, nil, 202, 0, "", ""},

			// 2026-07-28.
			{"modern notification", modern, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, 202, 0, "", ""},
			{"modern response", modern, `{"jsonrpc":"2.0","id":1,"result":{}}`, map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, 400, -32600, "null", "responses"},
			{"unknown method", modern, harness.JsonText(map[string]any{"jsonrpc": "2.0", "id": 8, "method": "prompts/list", "params": map[string]any{"_meta": meta}}), harness.ModernHeaders("prompts/list", ""), 404, -32601, "8", "prompts/list"},
			{"ping is gone", modern, harness.JsonText(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": map[string]any{"_meta": meta}}), harness.ModernHeaders("ping", ""), 404, -32601, "9", "ping"},
			{"unsupported version", modern, harness.JsonText(map[string]any{"jsonrpc": "2.0", "id": 10, "method": "server/discover", "params": map[string]any{"_meta": harness.ModernMeta(map[string]any{"io.modelcontextprotocol/protocolVersion": "2099-01-01"})}}), map[string]string{"Mcp-Protocol-Version": "2099-01-01", "Mcp-Method": "server/discover"}, 400, -32022, "10", "2099-01-01"},
			{"unknown version header, no session", modern, `{"jsonrpc":"2.0","id":11,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "v999"}, 400, -32022, "11", "v999"},
			{"version header mismatch", modern, harness.JsonText(map[string]any{"jsonrpc": "2.0", "id": 12, "method": "server/discover", "params": map[string]any{"_meta": harness.ModernMeta(map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28"})}}), map[string]string{"Mcp-Protocol-Version": "2099-01-01", "Mcp-Method": "server/discover"}, 400, -32020, "12", "2099-01-01"},
			{"missing version header", modern, harness.ModernDiscover, map[string]string{"Mcp-Method": "server/discover"}, 400, -32020, "1", "Mcp-Protocol-Version"},
			{"missing _meta", modern, `{"jsonrpc":"2.0","id":13,"method":"server/discover","params":{}}`, harness.ModernHeaders("server/discover", ""), 400, -32602, "13", "protocolVersion"},
			{"missing capabilities", modern, harness.JsonText(map[string]any{"jsonrpc": "2.0", "id": 14, "method": "tools/list", "params": map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}), harness.ModernHeaders("tools/list", ""), 400, -32602, "14", "clientCapabilities"},
			{"missing method header", modern, harness.ModernDiscover, map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, 400, -32020, "1", "Mcp-Method"},
			{"method header mismatch", modern, harness.ModernDiscover, harness.ModernHeaders("tools/list", ""), 400, -32020, "1", "tools/list"},
			{"method header case", modern, harness.ModernDiscover, harness.ModernHeaders("SERVER/DISCOVER", ""), 400, -32020, "1", "SERVER/DISCOVER"},
			{"missing name header", modern, echo(20), harness.ModernHeaders("tools/call", ""), 400, -32020, "20", "Mcp-Name"},
			{"name header mismatch", modern, echo(21), harness.ModernHeaders("tools/call", "demo__export"), 400, -32020, "21", "demo__export"},
			{"name header whitespace", modern, echo(22), harness.ModernHeaders("tools/call", "  demo__echo  "), 200, 0, "", ""},
			{"name header base64", modern, echo(23), harness.ModernHeaders("tools/call", "=?base64?ZGVtb19fZWNobw==?="), 200, 0, "", ""},
			{"name header base64 mismatch", modern, echo(24), harness.ModernHeaders("tools/call", "=?base64?ZGVtb19fZXhwb3J0?="), 400, -32020, "24", "demo__export"},
			{"name header bad base64", modern, echo(25), harness.ModernHeaders("tools/call", "=?base64?!!!?="), 400, -32020, "25", "malformed"},
			{"name header base64 non-ASCII", modern, oddBody, harness.ModernHeaders("tools/call", "=?base64?ZMOpasOgIHZ1?="), 200, -32602, "30", "Unknown tool"},
			{"name header literal of non-ASCII", modern, oddBody, harness.ModernHeaders("tools/call", "dj vu"), 400, -32020, "30", "Mcp-Name"},
			{"session id ignored in 2026", modern, harness.ModernDiscover, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover", "Mcp-Session-Id": "nope"}, 200, 0, "", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var r *harness.HttpReply
				if tc.host == nil {
					req, _ := http.NewRequest(http.MethodGet, m.URL, nil)
					req.Header.Set("Accept", "text/event-stream")
					req.Header.Set("Authorization", "Bearer "+m.Token)
					req.Header.Set("Mcp-Session-Id", legacy.Sid)
					for k, v := range tc.hdr {
						req.Header.Set(k, v)
					}
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					r = legacy.Read(resp)
					if allow := resp.Header.Get("Allow"); !strings.Contains(allow, "POST") {
						t.Errorf("Allow = %q", allow)
					}
				} else {
					r = tc.host.Do(tc.body, tc.hdr)
				}
				if r.Status != tc.status {
					t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
				}
				if tc.status == 202 {
					if r.Body != "" {
						t.Errorf("202 with a body: %q", r.Body)
					}
					return
				}
				if len(r.Msgs) != 1 {
					t.Fatalf("%d messages, want 1: %s", len(r.Msgs), r.Body)
				}
				msg := r.Msgs[0]
				if tc.code == 0 {
					if msg.Error != nil {
						t.Fatalf("error %d %s, want a result", msg.Error.Code, msg.Error.Message)
					}
					return
				}
				if msg.Error == nil {
					t.Fatalf("result %s, want error %d", msg.Result, tc.code)
				}
				if msg.Error.Code != tc.code || msg.ID.String() != tc.id || !strings.Contains(msg.Error.Message, tc.hasMsg) {
					t.Errorf("error id %s code %d %q, want id %s code %d with %q", msg.ID, msg.Error.Code, msg.Error.Message, tc.id, tc.code, tc.hasMsg)
				}
				if tc.code == -32022 {
					var data struct {
						Supported []string `json:"supported"`
						Requested string   `json:"requested"`
					}
					if err := json.Unmarshal(msg.Error.Data, &data); err != nil || !slices.Contains(data.Supported, "2026-07-28") || data.Requested == "" ||
						slices.ContainsFunc(data.Supported, func(v string) bool { return v < "2026-07-28" }) {
						t.Errorf("-32022 data %s, want supported (2026-07-28, no revision a request without a session cannot use) and requested", msg.Error.Data)
					}
				}
			})
		}

		// DELETE ends the session: later requests naming it get 404.
		legacy.EndSession()
		if r := legacy.Do(`{"jsonrpc":"2.0","id":40,"method":"ping"}`, nil); r.Status != 404 {
			t.Errorf("after DELETE: %d %s, want 404", r.Status, r.Body)
		}
		ctx, cancel := context.WithTimeout(context.Background(), harness.WaitLong)
		defer cancel()
		del, _ := http.NewRequestWithContext(ctx, http.MethodDelete, m.URL, nil)
		del.Header.Set("Authorization", "Bearer "+m.Token)
		resp, err := http.DefaultClient.Do(del)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("DELETE without a session: %d, want 400", resp.StatusCode)
		}
	})
}
