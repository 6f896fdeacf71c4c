package http

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestHTTPSessionStream: a legacy HTTP host (the go-sdk client, which
// opens the standalone GET stream after initialize) is told of an
// upstream's tool list change on that stream, and lists the new tool.
func TestHTTPSessionStream(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := harness.WriteServers(t, e, nil, map[string]any{"ch": harness.FixtureServer("changing", nil)})
		m := harness.StartHTTP(t, e, mode, cfg, false)
		changed := make(chan struct{}, 4)
		hc := &http.Client{Transport: harness.Bearer{Token: m.Token, Next: http.DefaultTransport}}
		client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-e2e-stream", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: m.URL, HTTPClient: hc, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ch__work"}); err != nil {
			t.Fatalf("ch__work: %v", err)
		}
		select {
		case <-changed:
		case <-time.After(harness.WaitLong):
			t.Fatalf("no notifications/tools/list_changed reached the HTTP host; mcpx log:\n%s", m.Logs())
		}
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, tool := range lt.Tools {
			found = found || tool.Name == "ch__more"
		}
		if !found {
			t.Errorf("tools/list after the change lacks ch__more")
		}
	})
}

// TestHTTPSessionStreamRules: one GET stream per session (a second gets
// 409), none without a session (400) or for an unknown one (404), none in
// 2026-07-28 (405), and DELETE of the session ends its stream.
func TestHTTPSessionStreamRules(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	m := harness.StartHTTP(t, e, mcpxtest.InProcess, cfg, false)
	do := func(method string, hdr map[string]string, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, m.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+m.Token)
		req.Header.Set("Accept", "application/json, text/event-stream")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	init := do("POST", nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	init.Body.Close()
	sid := init.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %s, no session id", init.Status)
	}
	session := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}

	stream := do("GET", session, "")
	if stream.StatusCode != 200 || !strings.HasPrefix(stream.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET stream: %s %s", stream.Status, stream.Header.Get("Content-Type"))
	}
	for _, c := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"second stream", session, http.StatusConflict},
		{"no session", nil, http.StatusBadRequest},
		{"unknown session", map[string]string{"Mcp-Session-Id": "0123"}, http.StatusNotFound},
		{"2026-07-28", map[string]string{"MCP-Protocol-Version": "2026-07-28"}, http.StatusMethodNotAllowed},
	} {
		resp := do("GET", c.hdr, "")
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET, %s: %s, want %d", c.name, resp.Status, c.want)
		}
	}
	// DELETE ends the session, and with it the stream.
	ended := make(chan error, 1)
	go func() {
		_, err := bufio.NewReader(stream.Body).ReadString(0)
		ended <- err
	}()
	del := do("DELETE", session, "")
	del.Body.Close()
	if del.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %s", del.Status)
	}
	select {
	case <-ended:
	case <-time.After(harness.WaitLong):
		t.Fatal("the GET stream outlived its session")
	}
	stream.Body.Close()
}
