package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// haproxyConf is the backend docs/replicas.md gives for legacy sessions:
// round-robin, and a stick table that learns each session's replica from
// the Mcp-Session-Id of its initialize response.
const haproxyConf = `global
	maxconn 1000
defaults
	mode http
	timeout connect 5s
	timeout client 1h
	timeout server 1h
frontend mcpx_front
	bind 127.0.0.1:%d
	default_backend mcpx
backend mcpx
	balance roundrobin
	stick-table type string len 64 size 100k expire 1h
	stick store-response res.hdr(Mcp-Session-Id)
	stick match req.hdr(Mcp-Session-Id)
%s`

// startHAProxy runs HAProxy with haproxyConf over the replicas on port
// until the test ends; it skips the test without HAProxy (fails it under
// CI).
func startHAProxy(t *testing.T, port int, replicas []*replicaProc) {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/haproxy"); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("haproxy is not installed: CI must run the replica tests (.ci/run installs it)")
			}
			t.Skip("haproxy is not installed: the stick-table affinity needs it (apt-get install haproxy)")
		}
	}
	var servers strings.Builder
	for i, r := range replicas {
		addr := strings.TrimSuffix(strings.TrimPrefix(r.URL, "http://"), "/mcp")
		fmt.Fprintf(&servers, "\tserver r%d %s check\n", i, addr)
	}
	conf := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(conf, fmt.Appendf(nil, haproxyConf, port, servers.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-db", "-f", conf)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-waited
		}
		if t.Failed() {
			t.Logf("haproxy output:\n%s", out)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			conn.Close()
			return
		}
		select {
		case err := <-waited:
			t.Fatalf("haproxy exited: %v\n%s", err, out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy did not listen within 10s\n%s", out)
		}
	}
}
