package liveview

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestLiveViewAccess: the one-time link's token (in its fragment) is
// traded once for a session key; without the key in its header nothing
// of the view's data is served, and no cookie is ever set; a foreign Host
// is refused (DNS rebinding), and so is an action without the view's own
// Origin.
func TestLiveViewAccess(t *testing.T) {
	t.Run("loopback", func(t *testing.T) { testLiveViewAccess(t, false) })
	t.Run("http-listener", func(t *testing.T) { testLiveViewAccess(t, true) })
}

// testLiveViewAccess runs TestLiveViewAccess with the view on a loopback
// listener of its own, or on the daemon's HTTP listener.
func testLiveViewAccess(t *testing.T, onHTTP bool) {
	e := mcpxtest.NewEnv(t)
	var settings map[string]any
	if onHTTP {
		settings = map[string]any{"http": map[string]any{"listen": "127.0.0.1:0"}}
	}
	cfg := e.WriteConfig(settings, mcpxtest.Demo{Name: "demo"})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	link := harness.UiLink(t, e, cfg)
	u, _ := url.Parse(link)
	origin := "http://" + u.Host
	st := harness.DaemonStatus(t, e, cfg)
	if onHTTP != (st.HTTP == origin+apitype.PathMCP) {
		t.Fatalf("the view is at %s, the HTTP listener at %q; want the view there: %v", origin, st.HTTP, onHTTP)
	}
	if len(st.Connected) != 1 || st.Connected[0].Client != "mcpxtest" || !strings.HasPrefix(st.Connected[0].ID, "host-") || st.Connected[0].Protocol != "2025-11-25" {
		t.Errorf("status lists hosts %+v, want the test's host on a stream", st.Connected)
	}
	if onHTTP {
		checkHTTPHostListed(t, e, cfg, st)
	}

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: harness.WaitLong}
	session := ""
	do := func(method, path string, header map[string]string, host string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, origin+path, nil)
		if session != "" {
			req.Header.Set("Mcpx-Ui-Session", session)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if sc := resp.Header.Values("Set-Cookie"); len(sc) != 0 {
			t.Errorf("%s %s set a cookie: %q", method, path, sc)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && method == "POST" {
			return resp.StatusCode, string(body)
		}
		return resp.StatusCode, resp.Header.Get("Content-Type")
	}
	if code, ct := do("GET", "/ui/", nil, ""); code != http.StatusOK || !strings.HasPrefix(ct, "text/html") {
		t.Errorf("the page: %d %s, want it (it holds no data)", code, ct)
	}
	for _, p := range []string{"/ui/state", "/ui/events"} {
		if code, _ := do("GET", p, nil, ""); code != http.StatusForbidden {
			t.Errorf("%s without the session key: %d, want 403", p, code)
		}
	}
	tok := u.Fragment[len("t="):]
	linkHdr := map[string]string{"Mcpx-Ui-Link": tok, "Origin": origin}
	if code, _ := do("POST", "/ui/session", linkHdr, "rebind.example:"+u.Port()); code != http.StatusForbidden {
		t.Errorf("the link with a foreign Host: %d, want 403", code)
	}
	code, body := do("POST", "/ui/session", linkHdr, "")
	var got struct{ Session string }
	if err := json.Unmarshal([]byte(body), &got); code != http.StatusOK || err != nil || got.Session == "" {
		t.Fatalf("trading the link: %d %s", code, body)
	}
	if code, _ := do("POST", "/ui/session", linkHdr, ""); code != http.StatusForbidden {
		t.Errorf("the link used a second time: %d, want 403", code)
	}
	session = got.Session
	if code, ct := do("GET", "/ui/state", nil, ""); code != http.StatusOK || ct != "application/json" {
		t.Errorf("state with the session key: %d %s", code, ct)
	}
	if code, _ := do("GET", "/ui/state", map[string]string{"Origin": "http://evil.example"}, ""); code != http.StatusForbidden {
		t.Errorf("state with a foreign Origin: %d, want 403", code)
	}
	for _, hdr := range []map[string]string{nil, {"Origin": "http://localhost:1"}} {
		if code, _ := do("POST", "/ui/servers/demo/restart", hdr, ""); code != http.StatusForbidden {
			t.Errorf("restart with Origin %q: %d, want 403", hdr["Origin"], code)
		}
	}
	if code, _ := do("POST", "/ui/servers/nosuch/restart", map[string]string{"Origin": origin}, ""); code != http.StatusNotFound {
		t.Errorf("restart of an unknown server: %d, want 404", code)
	}
	if code, _ := do("POST", "/ui/calls/999999/cancel", map[string]string{"Origin": origin}, ""); code != http.StatusNotFound {
		t.Errorf("cancel of no call: %d, want 404", code)
	}
	if code, _ := do("POST", "/ui/servers/demo/restart", map[string]string{"Origin": origin, "Mcpx-Ui-Session": ""}, ""); code != http.StatusForbidden {
		t.Errorf("restart without the session key: %d, want 403", code)
	}
	if cs := jar.Cookies(u); len(cs) != 0 {
		t.Errorf("the client holds cookies of the view: %v", cs)
	}
	starts := harness.DaemonStatus(t, e, cfg).Upstreams[0].Starts
	if code, _ := do("POST", "/ui/servers/demo/restart", map[string]string{"Origin": origin}, ""); code != http.StatusNoContent {
		t.Fatalf("restart from the view's origin: %d, want 204", code)
	}
	harness.WaitStatus(t, e, cfg, "demo restarted", func(st apitype.Status) bool {
		return st.Upstreams[0].Starts == starts+1 && st.Upstreams[0].State == "ready"
	})
}

// artifactDir is where a test keeps what it leaves for people to look at
// (screenshots): under $MCPX_ARTIFACTS if set, else the temp dir; kept
// after the test, and logged.
func artifactDir(t *testing.T) string {
	root := os.Getenv("MCPX_ARTIFACTS")
	if root == "" {
		root = filepath.Join(os.TempDir(), "mcpx-artifacts")
	}
	dir := filepath.Join(root, strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("artifacts in %s", dir)
	return dir
}

// checkHTTPHostListed opens a legacy HTTP session and checks that status
// lists it as a host until it ends it (DELETE).
func checkHTTPHostListed(t *testing.T, e *mcpxtest.Env, cfg string, st apitype.Status) {
	t.Helper()
	tok, err := os.ReadFile(st.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	send := func(method, body, session string) *http.Response {
		req, _ := http.NewRequest(method, st.HTTP, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := send("POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rawhttp","version":"1"}}}`, "")
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize over HTTP: %d, session %q", resp.StatusCode, session)
	}
	listed := func(st apitype.Status) bool {
		for _, h := range st.Connected {
			if h.Client == "rawhttp" && strings.HasPrefix(h.ID, "http-") && h.Protocol == "2025-11-25" {
				return true
			}
		}
		return false
	}
	if st := harness.DaemonStatus(t, e, cfg); !listed(st) || st.HTTPSessions != 1 {
		t.Errorf("an HTTP session is not listed: %+v", st.Connected)
	}
	send("DELETE", "", session)
	harness.WaitStatus(t, e, cfg, "the HTTP session gone from the hosts", func(st apitype.Status) bool { return !listed(st) })
}
