package e2e

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

// cluster is two replicas behind nginx.
type cluster struct {
	URL      string // nginx's MCP endpoint
	Token    string
	PG       string // the store's URL
	Replicas []*replicaProc
	envs     []*mcpxtest.Env
	cfgs     []string // each replica's config file
}

type replicaProc struct {
	*serveHTTPChild
	killed bool
}

// nginxBinary finds nginx, or skips the test (fails it under CI).
func nginxBinary(t *testing.T) string {
	return balancerBinary(t, "nginx", "the replica tests need it")
}

// balancerBinary finds the load balancer name (on PATH or in /usr/sbin),
// or skips the test, saying why it needs it (fails it under CI).
func balancerBinary(t *testing.T, name, need string) string {
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

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startCluster starts two replicas over a fresh PostgreSQL schema, each
// with its own demo upstream (records in its own env), and nginx in
// front. leaseTerm is the replicas' job lease.
func startCluster(t *testing.T, leaseTerm string) *cluster {
	t.Helper()
	nginxBinary(t)
	return startClusterOn(t, storetest.PostgresURL(t), leaseTerm)
}

// startClusterOn is startCluster over the PostgreSQL at pg.
func startClusterOn(t *testing.T, pg, leaseTerm string) *cluster {
	return startClusterWith(t, clusterOpts{pg: pg, jobs: map[string]any{"leaseTerm": leaseTerm}})
}

// clusterOpts vary startClusterWith's cluster.
type clusterOpts struct {
	pg string // the PostgreSQL URL; "" for a fresh schema of the shared one
	// jobs is the replicas' mcpx.jobs block.
	jobs map[string]any
	// balance is nginx's balancing directive in the upstream block ("" is
	// round-robin), such as "ip_hash;".
	balance string
	// allowedHosts is the replicas' mcpx.http.allowedHosts (nil: nginx's
	// host:port).
	allowedHosts []string
	// stores, if set, is each replica's own store URL (the same database
	// reached another way, such as through a proxy); pg is the test's.
	stores []string
	// hosts is the replicas' mcpx.hosts block (host tool filters).
	hosts map[string]any
	// servers are the replicas' upstreams (nil: the demo alone).
	servers []mcpxtest.Demo
}

// startClusterWith starts two replicas and nginx as o says.
func startClusterWith(t *testing.T, o clusterOpts) *cluster {
	t.Helper()
	ngx := nginxBinary(t)
	if o.pg == "" {
		o.pg = storetest.PostgresURL(t)
	}
	mcpxtest.NodeModule(t, "@modelcontextprotocol/client", "package.json")
	port := freePort(t)
	lb := fmt.Sprintf("127.0.0.1:%d", port)
	c := &cluster{URL: "http://" + lb + "/mcp", PG: o.pg}
	if o.allowedHosts == nil {
		o.allowedHosts = []string{lb}
	}
	for i := range 2 {
		settings := map[string]any{"store": o.pg, "http": map[string]any{"allowedHosts": o.allowedHosts}, "jobs": o.jobs}
		if o.hosts != nil {
			settings["hosts"] = o.hosts
		}
		servers := o.servers
		if servers == nil {
			servers = []mcpxtest.Demo{{Name: "demo"}}
		}
		if o.stores != nil {
			settings["store"] = o.stores[i]
		}
		e := mcpxtest.NewEnv(t)
		if i > 0 { // one state dir: one token file for both
			e.Vars["XDG_STATE_HOME"] = c.envs[0].Vars["XDG_STATE_HOME"]
		}
		c.envs = append(c.envs, e)
		cfg := e.WriteConfig(settings, servers...)
		c.cfgs = append(c.cfgs, cfg)
		if i == 0 {
			tok, err := config.Token(e.Vars["XDG_STATE_HOME"] + "/mcpx/token")
			if err != nil {
				t.Fatal(err)
			}
			c.Token = tok
		}
		c.Replicas = append(c.Replicas, startReplica(t, e, cfg, fmt.Sprint("replica-", i)))
	}
	startNginx(t, ngx, port, o.balance, c.Replicas)
	return c
}

func startReplica(t *testing.T, e *mcpxtest.Env, cfg, name string) *replicaProc {
	t.Helper()
	r := &replicaProc{serveHTTPChild: startServeHTTP(t, e, cfg, func(line string) {
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

// startWaits starts n jobs of the demo's wait (tagged w) and n of its
// sleep_then (tagged sTag), each working seconds, and returns their ids
// once the upstreams have got every call.
func (c *cluster) startWaits(t *testing.T, n, seconds int, sTag string) (w, s []string) {
	t.Helper()
	var wj, sj struct{ IDs []string }
	c.host(t, map[string]any{"mode": "start", "count": n, "tool": "demo__wait", "tag": "w", "arguments": map[string]any{"seconds": seconds}}, &wj)
	c.host(t, map[string]any{"mode": "start", "count": n, "tool": "demo__sleep_then", "tag": sTag, "arguments": map[string]any{"seconds": seconds}}, &sj)
	for deadline := time.Now().Add(waitLong); ; time.Sleep(20 * time.Millisecond) {
		nw, _ := c.executions("wait")
		ns, _ := c.executions("sleep_then")
		if nw == n && ns == n {
			return wj.IDs, sj.IDs
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upstreams got %d wait and %d sleep_then calls, want %d each", nw, ns, n)
		}
	}
}

// kill ends the replica with SIGKILL and waits for it.
func (r *replicaProc) kill(t *testing.T) {
	t.Helper()
	r.killed = true
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("a killed replica did not exit")
	}
}

const nginxConf = `worker_processes 1;
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

// startNginx runs nginx over the replicas on port until the test ends,
// round-robin unless balance names another method.
func startNginx(t *testing.T, bin string, port int, balance string, replicas []*replicaProc) {
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
		fmt.Fprintf(&servers, "\t\tserver %s max_fails=1 fail_timeout=2s;\n", r.hostPort())
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, nginxConf, dir, port, servers.String(), balance), 0o644); err != nil {
		t.Fatal(err)
	}
	runBalancer(t, exec.Command(bin, "-p", dir, "-c", conf, "-g", "daemon off;"), port, func() string {
		log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		return "error.log:\n" + string(log)
	})
}

// hostPort is the replica's address as a load balancer names it.
func (r *replicaProc) hostPort() string {
	return strings.TrimSuffix(strings.TrimPrefix(r.URL, "http://"), "/mcp")
}

// runBalancer starts cmd, a load balancer in the foreground, and returns
// once it listens on port; the test's end stops it (SIGTERM, SIGKILL after
// 10s). Its output, and what more adds (if not nil), is logged when the
// test fails.
func runBalancer(t *testing.T, cmd *exec.Cmd, port int, more func() string) {
	t.Helper()
	name := filepath.Base(cmd.Path)
	out := &syncBuffer{}
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

// host runs replicahost.mjs with spec (url, unless spec names one, and
// token filled in) and decodes its report into v.
func (c *cluster) host(t *testing.T, spec map[string]any, v any) {
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
	cmd.Stderr = tlogWriter{t}
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

// executions counts tool's requests at every replica's upstream, and at
// each.
func (c *cluster) executions(tool string) (total int, each []int) {
	for _, e := range c.envs {
		n := executions(e, "demo", tool)
		total += n
		each = append(each, n)
	}
	return total, each
}

// ownPostgres starts a PostgreSQL server of the test's own (it will be
// stopped and started mid-test, which the shared one must not be) with
// scripts/postgres, and returns its URL and data dir.
func ownPostgres(t *testing.T) (url, dir string) {
	t.Helper()
	script := filepath.Join(mcpxtest.ModuleRoot(), "scripts", "postgres")
	if exec.Command(script, "available").Run() != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("PostgreSQL is not installed: CI must run the replica tests")
		}
		t.Skip("PostgreSQL is not installed: this test starts a server of its own")
	}
	dir = filepath.Join(os.TempDir(), fmt.Sprintf("mx-pg-%d-%d", os.Getpid(), time.Now().UnixNano()))
	out, err := exec.Command(script, "start", dir).Output()
	if err != nil {
		t.Fatalf("scripts/postgres start: %v", err)
	}
	t.Cleanup(func() { _ = exec.Command(script, "stop", dir).Run() })
	return strings.TrimSpace(string(out)), dir
}

// postgresCtl runs scripts/postgres verb dir (and more, such as restart's
// mode).
func postgresCtl(t *testing.T, verb, dir string, more ...string) {
	t.Helper()
	script := filepath.Join(mcpxtest.ModuleRoot(), "scripts", "postgres")
	if out, err := exec.Command(script, append([]string{verb, dir}, more...)...).CombinedOutput(); err != nil {
		t.Fatalf("scripts/postgres %s: %v: %s", verb, err, out)
	}
}
