package replicas

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
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
func startHAProxy(t *testing.T, port int, replicas []*harness.ReplicaProc) {
	t.Helper()
	bin := harness.BalancerBinary(t, "haproxy", "the stick-table affinity needs it")
	var servers strings.Builder
	for i, r := range replicas {
		fmt.Fprintf(&servers, "\tserver r%d %s check\n", i, r.HostPort())
	}
	conf := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(conf, fmt.Appendf(nil, haproxyConf, port, servers.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	harness.RunBalancer(t, exec.Command(bin, "-db", "-f", conf), port, nil)
}
