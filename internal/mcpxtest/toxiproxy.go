package mcpxtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"testing"
	"time"
)

// Toxiproxy is a Toxiproxy server (pinned in test/tools/go.mod, built on
// first use) that puts TCP faults between mcpx and an HTTP upstream:
// latency, a blackhole, a connection refused or cut. Its HTTP API is
// driven directly.
type Toxiproxy struct {
	t   testing.TB
	api string
}

// toxiTool is the Toxiproxy server.
var toxiTool = &toolBinary{pkg: "github.com/Shopify/toxiproxy/v2/cmd/server", name: "toxiproxy-server", what: "toxiproxy"}

// StartToxiproxy starts a Toxiproxy server for the test; it stops with it.
func StartToxiproxy(t testing.TB) *Toxiproxy {
	t.Helper()
	bin := toxiTool.path(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-host", "127.0.0.1", "-port", port)
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	tp := &Toxiproxy{t: t, api: "http://127.0.0.1:" + port}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(tp.api + "/version")
		if err == nil {
			resp.Body.Close()
			return tp
		}
		if time.Now().After(deadline) {
			t.Fatalf("toxiproxy did not answer within 30s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (tp *Toxiproxy) do(method, path string, body any, out any) {
	tp.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			tp.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, tp.api+path, r)
	if err != nil {
		tp.t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		tp.t.Fatalf("toxiproxy %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		tp.t.Fatalf("toxiproxy %s %s: %s: %s", method, path, resp.Status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			tp.t.Fatalf("toxiproxy %s %s: %v: %s", method, path, err, b)
		}
	}
}

// Proxy creates a proxy to upstream (host:port) and returns the address
// it listens on.
func (tp *Toxiproxy) Proxy(name, upstream string) string {
	tp.t.Helper()
	var got struct {
		Listen string `json:"listen"`
	}
	tp.do("POST", "/proxies", map[string]any{"name": name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true}, &got)
	return got.Listen
}

// SetEnabled enables or disables a proxy. Disabling it closes every
// connection through it and refuses new ones.
func (tp *Toxiproxy) SetEnabled(name string, enabled bool) {
	tp.t.Helper()
	tp.do("POST", "/proxies/"+name, map[string]any{"enabled": enabled}, nil)
}

// AddToxic adds a toxic (type latency, timeout, reset_peer, ...) to the
// downstream direction (upstream to mcpx) of a proxy, or upstream if
// upstream is true.
func (tp *Toxiproxy) AddToxic(proxy, name, typ string, upstream bool, attrs map[string]any) {
	tp.t.Helper()
	stream := "downstream"
	if upstream {
		stream = "upstream"
	}
	tp.do("POST", "/proxies/"+proxy+"/toxics", map[string]any{"name": name, "type": typ, "stream": stream, "toxicity": 1.0, "attributes": attrs}, nil)
}

// RemoveToxic removes a toxic.
func (tp *Toxiproxy) RemoveToxic(proxy, name string) {
	tp.t.Helper()
	tp.do("DELETE", "/proxies/"+proxy+"/toxics/"+name, nil, nil)
}
