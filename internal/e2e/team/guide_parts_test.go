package team

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// guidePath is docs/team.md, the guide TestTeamGuide follows.
const guidePath = "../../../docs/team.md"

// guideBlock returns the fenced block that follows the guide's marker
// <!-- guide: name -->.
func guideBlock(t *testing.T, name string) string {
	t.Helper()
	doc, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "<!-- guide: "+name+" -->\n```")
	if !ok {
		t.Fatalf("docs/team.md has no block marked %q", name)
	}
	_, body, _ := strings.Cut(after, "\n") // the fence's language
	body, _, ok = strings.Cut(body, "```")
	if !ok {
		t.Fatalf("docs/team.md's block %q is not closed", name)
	}
	return body
}

// swap replaces each example value of the guide's block by the test's;
// a value the block no longer holds fails the test, so the guide and
// this table change together.
func swap(t *testing.T, name, text string, pairs [][2]string) string {
	t.Helper()
	for _, p := range pairs {
		if !strings.Contains(text, p[0]) {
			t.Fatalf("docs/team.md's block %q no longer holds %q: change the test's table with it", name, p[0])
		}
		text = strings.ReplaceAll(text, p[0], p[1])
	}
	return text
}

// guideDaemon runs the unit's ExecStart, its binary and config path
// swapped for the test's, in e (whose Vars stand for the unit's
// EnvironmentFile), until the test ends, and returns once the replica's
// listener at addr answers as host.
func guideDaemon(t *testing.T, e *mcpxtest.Env, cfg, addr, host string) {
	t.Helper()
	unit := guideBlock(t, "mcpx.service")
	var start string
	for l := range strings.Lines(unit) {
		if s, ok := strings.CutPrefix(strings.TrimSpace(l), "ExecStart="); ok {
			start = s
		}
	}
	args := strings.Fields(swap(t, "mcpx.service", start, [][2]string{{"/etc/mcpx/config.json", cfg}}))
	if len(args) < 2 || args[0] != "/usr/local/bin/mcpx" {
		t.Fatalf("the unit's ExecStart is %q, not /usr/local/bin/mcpx …", start)
	}
	cmd := exec.Command(e.Bin, args[1:]...)
	cmd.Env = e.Environ()
	logs := &harness.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("the daemon on %s:\n%s", addr, logs.String())
		}
	})
	c := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(harness.WaitLong); ; time.Sleep(50 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/.well-known/oauth-protected-resource", nil)
		req.Host = host
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-done:
			t.Fatalf("the daemon on %s exited: %v\n%s", addr, err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon on %s does not answer:\n%s", addr, logs.String())
		}
	}
}

// guideNginx runs the guide's nginx block over the replicas at addrs,
// listening on port, inside the main context nginx needs.
func guideNginx(t *testing.T, lbPort string, addrs []string) {
	t.Helper()
	port, err := strconv.Atoi(lbPort)
	if err != nil {
		t.Fatal(err)
	}
	bin := harness.NginxBinary(t)
	site := swap(t, "nginx.conf", guideBlock(t, "nginx.conf"), [][2]string{
		{"mcpx-1.internal:7001", addrs[0]},
		{"mcpx-2.internal:7001", addrs[1]},
		{"listen 443 ssl;", fmt.Sprintf("listen 127.0.0.1:%d;", port)},
		{"ssl_certificate /etc/ssl/mcpx.example.com.pem;", ""},
		{"ssl_certificate_key /etc/ssl/mcpx.example.com.key;", ""},
	})
	dir, err := os.MkdirTemp("", "mx-nginx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // nginx's workers may run as another user
		t.Fatal(err)
	}
	main := fmt.Sprintf(`worker_processes 1;
error_log %[1]s/error.log warn;
pid %[1]s/nginx.pid;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	include %[1]s/mcpx.conf;
}
`, dir)
	for name, text := range map[string]string{"nginx.conf": main, "mcpx.conf": site} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	harness.RunBalancer(t, exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-g", "daemon off;"), port, func() string {
		log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		return "error.log:\n" + string(log)
	})
}

// via sends every request to one replica's address, its Host and URL
// otherwise as the load balancer's: a request nginx sent to that replica.
type via struct{ addr string }

func (v via) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = r.URL.Host
	r.URL.Host = v.addr
	return http.DefaultTransport.RoundTrip(r)
}

// connectThrough connects a go-sdk host declaring URL-mode elicitation
// to endpoint with tok, its requests carried by next.
func connectThrough(t *testing.T, endpoint, tok string, next http.RoundTripper) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-e2e-guide", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	hc := &http.Client{Transport: harness.Bearer{Token: tok, Next: next}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
