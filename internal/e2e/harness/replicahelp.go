package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store/storetest"
)

// Helpers of the replica tests: two `mcpx serve --http` replicas sharing
// a PostgreSQL store, behind nginx round-robin.

// Cluster is two replicas behind nginx.
type Cluster struct {
	URL      string // nginx's MCP endpoint
	Token    string
	PG       string // the store's URL
	Replicas []*ReplicaProc
	Envs     []*mcpxtest.Env
	Cfgs     []string // each replica's config file
}

type ReplicaProc struct {
	*ServeHTTPChild
	killed bool
}

// NginxBinary finds nginx, or skips the test (fails it under CI).
func NginxBinary(t *testing.T) string {
	return BalancerBinary(t, "nginx", "the replica tests need it")
}

// BalancerBinary finds the load balancer name (on PATH or in /usr/sbin),
// or skips the test, saying why it needs it (fails it under CI).
func BalancerBinary(t *testing.T, name, need string) string {
	t.Helper()
	for _, p := range []string{name, "/usr/sbin/" + name} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed: CI must run the replica tests (.ci/run installs it)", name)
	}
	t.Skipf("%s is not installed: %s (apt-get install %s)", name, need, name)
	return ""
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// StartCluster starts two replicas over a fresh PostgreSQL schema, each
// with its own demo upstream (records in its own env), and nginx in
// front. leaseTerm is the replicas' job lease.
func StartCluster(t *testing.T, leaseTerm string) *Cluster {
	t.Helper()
	NginxBinary(t)
	return StartClusterOn(t, storetest.PostgresURL(t), leaseTerm)
}

// StartClusterOn is startCluster over the PostgreSQL at pg.
func StartClusterOn(t *testing.T, pg, leaseTerm string) *Cluster {
	return StartClusterWith(t, ClusterOpts{Pg: pg, Jobs: map[string]any{"leaseTerm": leaseTerm}})
}

// ClusterOpts vary startClusterWith's cluster.
type ClusterOpts struct {
	Pg string // the PostgreSQL URL; "" for a fresh schema of the shared one
	// Jobs is the replicas' mcpx.jobs block.
	Jobs map[string]any
	// Balance is nginx's balancing directive in the upstream block ("" is
	// round-robin), such as "ip_hash;".
	Balance string
	// AllowedHosts is the replicas' mcpx.http.allowedHosts (nil: nginx's
	// host:port).
	AllowedHosts []string
	// Stores, if set, is each replica's own store URL (the same database
	// reached another way, such as through a proxy); pg is the test's.
	Stores []string
	// Hosts is the replicas' mcpx.hosts block (host tool filters).
	Hosts map[string]any
	// Servers are the replicas' upstreams (nil: the demo alone).
	Servers []mcpxtest.Demo
}

// StartClusterWith starts two replicas and nginx as o says.
func StartClusterWith(t *testing.T, o ClusterOpts) *Cluster {
	t.Helper()
	ngx := NginxBinary(t)
	if o.Pg == "" {
		o.Pg = storetest.PostgresURL(t)
	}
	mcpxtest.NodeModule(t, "@modelcontextprotocol/client", "package.json")
	port := FreePort(t)
	lb := fmt.Sprintf("127.0.0.1:%d", port)
	c := &Cluster{URL: "http://" + lb + "/mcp", PG: o.Pg}
	if o.AllowedHosts == nil {
		o.AllowedHosts = []string{lb}
	}
	for i := range 2 {
		settings := map[string]any{"store": o.Pg, "http": map[string]any{"allowedHosts": o.AllowedHosts}, "jobs": o.Jobs}
		if o.Hosts != nil {
			settings["hosts"] = o.Hosts
		}
		servers := o.Servers
		if servers == nil {
			servers = []mcpxtest.Demo{{Name: "demo"}}
		}
		if o.Stores != nil {
			settings["store"] = o.Stores[i]
		}
		e := mcpxtest.NewEnv(t)
		if i > 0 { // one state dir: one token file for both
			e.Vars["XDG_STATE_HOME"] = c.Envs[0].Vars["XDG_STATE_HOME"]
		}
		c.Envs = append(c.Envs, e)
		cfg := e.WriteConfig(settings, servers...)
		c.Cfgs = append(c.Cfgs, cfg)
		if i == 0 {
			tok, err := config.Token(e.Vars["XDG_STATE_HOME"] + "/mcpx/token")
			if err != nil {
				t.Fatal(err)
			}
			c.Token = tok
		}
		c.Replicas = append(c.Replicas, StartReplica(t, e, cfg, fmt.Sprint("replica-", i)))
	}
	StartNginx(t, ngx, port, o.Balance, c.Replicas)
	return c
}

func StartReplica(t *testing.T, e *mcpxtest.Env, cfg, name string) *ReplicaProc {
	t.Helper()
	r := &ReplicaProc{ServeHTTPChild: StartServeHTTP(t, e, cfg, func(line string) {
		if testing.Verbose() {
			t.Log(name + ": " + line)
		}
	})}
	t.Cleanup(func() {
		if !r.killed {
			_ = r.stop(t)
		}
	})
	return r
}

// StartWaits starts n jobs of the demo's wait (tagged w) and n of its
// sleep_then (tagged sTag), each working seconds, and returns their ids
// once the upstreams have got every call.
func (c *Cluster) StartWaits(t *testing.T, n, seconds int, sTag string) (w, s []string) {
	t.Helper()
	var wj, sj struct{ IDs []string }
	c.Host(t, map[string]any{"mode": "start", "count": n, "tool": "demo__wait", "tag": "w", "arguments": map[string]any{"seconds": seconds}}, &wj)
	c.Host(t, map[string]any{"mode": "start", "count": n, "tool": "demo__sleep_then", "tag": sTag, "arguments": map[string]any{"seconds": seconds}}, &sj)
	for deadline := time.Now().Add(WaitLong); ; time.Sleep(20 * time.Millisecond) {
		nw, _ := c.Executions("wait")
		ns, _ := c.Executions("sleep_then")
		if nw == n && ns == n {
			return wj.IDs, sj.IDs
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upstreams got %d wait and %d sleep_then calls, want %d each", nw, ns, n)
		}
	}
}

// Kill ends the replica with SIGKILL and waits for it.
func (r *ReplicaProc) Kill(t *testing.T) {
	t.Helper()
	r.killed = true
	if err := r.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Exited:
	case <-time.After(20 * time.Second):
		t.Fatal("a killed replica did not exit")
	}
}

const NginxConf = `worker_processes 1;
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
	upstream mcpx {
		%[4]s
%[3]s		keepalive 16;
	}
	server {
		listen 127.0.0.1:%[2]d;
		location /mcp {
			proxy_pass http://mcpx;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_set_header Host $http_host;
			proxy_buffering off;
			proxy_read_timeout 1h;
			proxy_next_upstream error timeout;
		}
	}
}
`

// StartNginx runs nginx over the replicas on port until the test ends,
// round-robin unless balance names another method.
func StartNginx(t *testing.T, bin string, port int, balance string, replicas []*ReplicaProc) {
	t.Helper()
	dir, err := os.MkdirTemp("", "mx-nginx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// nginx run as root hands its workers to an unprivileged user, who
	// must reach the temp paths.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var servers strings.Builder
	for _, r := range replicas {
		fmt.Fprintf(&servers, "\t\tserver %s max_fails=1 fail_timeout=2s;\n", r.HostPort())
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, NginxConf, dir, port, servers.String(), balance), 0o644); err != nil {
		t.Fatal(err)
	}
	RunBalancer(t, exec.Command(bin, "-p", dir, "-c", conf, "-g", "daemon off;"), port, func() string {
		log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		return "error.log:\n" + string(log)
	})
}

// HostPort is the replica's address as a load balancer names it.
func (r *ReplicaProc) HostPort() string {
	return strings.TrimSuffix(strings.TrimPrefix(r.URL, "http://"), "/mcp")
}

// RunBalancer starts cmd, a load balancer in the foreground, and returns
// once it listens on port; the test's end stops it (SIGTERM, SIGKILL after
// 10s). Its output, and what more adds (if not nil), is logged when the
// test fails.
func RunBalancer(t *testing.T, cmd *exec.Cmd, port int, more func() string) {
	t.Helper()
	name := filepath.Base(cmd.Path)
	out := &SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	output := func() string {
		if more == nil {
			return out.String()
		}
		return out.String() + "\n" + more()
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
			t.Logf("%s output:\n%s", name, output())
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			conn.Close()
			return
		}
		select {
		case err := <-waited:
			t.Fatalf("%s exited: %v\n%s", name, err, output())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen within 10s\n%s", name, output())
		}
	}
}

// Host runs replicahost.mjs with spec (url, unless spec names one, and
// token filled in) and decodes its report into v.
func (c *Cluster) Host(t *testing.T, spec map[string]any, v any) {
	t.Helper()
	node, interop := mcpxtest.Node(t)
	if spec["url"] == nil {
		spec["url"] = c.URL
	}
	spec["token"] = c.Token
	if spec["deadlineMs"] == nil {
		spec["deadlineMs"] = 120000
	}
	b, _ := json.Marshal(spec)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(interop, "replicahost.mjs"), string(b))
	cmd.Dir = interop
	cmd.Stderr = TlogWriter{t}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("replicahost.mjs: %v: %s", err, out)
	}
	var r struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if json.Unmarshal(out, &r) != nil || !r.OK {
		t.Fatalf("replicahost.mjs failed: %s", out)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatal(err)
	}
}

// Executions counts tool's requests at every replica's upstream, and at
// each.
func (c *Cluster) Executions(tool string) (total int, each []int) {
	for _, e := range c.Envs {
		n := Executions(e, "demo", tool)
		total += n
		each = append(each, n)
	}
	return total, each
}
