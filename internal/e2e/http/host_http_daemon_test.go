package http

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestDaemonHTTP: a daemon whose config sets mcpx.http.listen serves MCP
// over HTTP on that TCP address (with the token `mcpx token` prints, or a
// named one until it is revoked) and
// on its unix socket at /mcp (any Host, no token, no browser); `mcpx
// status` shows the address and the token's file.
func TestDaemonHTTP(t *testing.T) {
	t.Parallel()
	e := mcpxtest.NewEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := e.WriteConfig(map[string]any{"http": map[string]any{"listen": addr}}, mcpxtest.Demo{Name: "demo"})

	tok, stderr, code := e.Run(30*time.Second, "token")
	tok = strings.TrimSpace(tok)
	if code != 0 || len(tok) < 40 {
		t.Fatalf("mcpx token: exit %d, %q %s", code, tok, stderr)
	}
	path, _, _ := e.Run(30*time.Second, "token", "--path")
	path = strings.TrimSpace(path)
	if want := filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "token"); path != want {
		t.Errorf("mcpx token --path = %q, want %q", path, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v, %v; want mode 0600", fi.Mode(), err)
	}
	if again, _, _ := e.Run(30*time.Second, "token"); strings.TrimSpace(again) != tok {
		t.Errorf("mcpx token changed: %q then %q", tok, again)
	}

	if out, stderr, code := e.Run(60*time.Second, "tools", "--config", cfg); code != 0 {
		t.Fatalf("mcpx tools (starting the daemon): exit %d\n%s\n%s", code, out, stderr)
	}
	out, _, code := e.Run(30*time.Second, "status", "--config", cfg, "--json")
	var st apitype.Status
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("mcpx status --json: exit %d: %s", code, out)
	}
	url := "http://" + addr + "/mcp"
	if st.HTTP != url || st.TokenFile != path {
		t.Errorf("status http %q token file %q, want %q and %q", st.HTTP, st.TokenFile, url, path)
	}
	text, _, _ := e.Run(30*time.Second, "status", "--config", cfg)
	if !strings.Contains(text, "http     "+url+" (bearer token in "+path+")") {
		t.Errorf("mcpx status does not show the HTTP endpoint and token file:\n%s", text)
	}

	// TCP: the token is required.
	m := &harness.HTTPMCPX{URL: url, Token: tok, LogBuf: &harness.SyncBuffer{}}
	h := harness.NewRawHost(t, m)
	h.Initialize("2025-11-25")
	r := h.Do(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
	if r.Status != 200 || len(r.Msgs) != 1 || r.Msgs[0].Error != nil || !strings.Contains(r.Body, "demo__export") {
		t.Fatalf("tools/list over TCP: %d %s", r.Status, r.Body)
	}
	if r := h.Do(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Authorization": ""}); r.Status != 401 {
		t.Errorf("without the token over TCP: %d, want 401", r.Status)
	}
	// A named token opens it too, until it is revoked: the running
	// daemon notices without a reload.
	named, _, code := e.Run(30*time.Second, "token", "--name", "cursor")
	if code != 0 {
		t.Fatalf("mcpx token --name cursor: exit %d", code)
	}
	n := harness.NewRawHost(t, &harness.HTTPMCPX{URL: url, Token: strings.TrimSpace(named), LogBuf: &harness.SyncBuffer{}})
	if r := n.Do(harness.ModernDiscover, harness.ModernHeaders("server/discover", "")); r.Status != 200 {
		t.Errorf("server/discover with a named token: %d %s", r.Status, r.Body)
	}
	if _, _, code := e.Run(30*time.Second, "token", "--revoke", "cursor"); code != 0 {
		t.Fatalf("mcpx token --revoke cursor: exit %d", code)
	}
	if r := n.Do(harness.ModernDiscover, harness.ModernHeaders("server/discover", "")); r.Status != 401 {
		t.Errorf("server/discover with a revoked token: %d, want 401", r.Status)
	}
	out, _, _ = e.Run(30*time.Second, "status", "--config", cfg, "--json")
	if json.Unmarshal([]byte(out), &st) != nil || st.HTTPSessions != 1 {
		t.Errorf("status httpSessions = %d, want 1", st.HTTPSessions)
	}

	// The unix socket: any Host, no token; a browser's Origin is refused.
	sockClient := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", st.Socket)
	}}}
	t.Cleanup(sockClient.CloseIdleConnections)
	s := harness.NewRawHost(t, &harness.HTTPMCPX{URL: "http://localhost:7777/mcp", LogBuf: &harness.SyncBuffer{}})
	s.Hc = sockClient
	r = s.Do(harness.ModernDiscover, harness.ModernHeaders("server/discover", ""))
	if r.Status != 200 || len(r.Msgs) != 1 || r.Msgs[0].Error != nil {
		t.Fatalf("server/discover on the socket: %d %s", r.Status, r.Body)
	}
	s.Initialize("2025-03-26")
	r = s.Do(harness.CallBody(3, "demo__echo", map[string]any{"via": "socket"}, nil), nil)
	if len(r.Msgs) != 1 || r.Msgs[0].Error != nil || harness.ResultText(t, r.Msgs[0].Result) != `{"via":"socket"}` {
		t.Errorf("echo on the socket: %d %s", r.Status, r.Body)
	}
	if r := s.Do(harness.ModernDiscover, map[string]string{"Origin": "http://localhost:3000", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}); r.Status != 403 {
		t.Errorf("Origin on the socket: %d, want 403", r.Status)
	}
}
