package e2e

import (
	"bufio"
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
	URL    string
	cmd    *exec.Cmd
	waited chan error
	killed bool
}

// nginxBinary finds nginx, or skips the test (fails it under CI).
func nginxBinary(t *testing.T) string {
	for _, p := range []string{"nginx", "/usr/sbin/nginx"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("nginx is not installed: CI must run the replica tests (.ci/run installs it)")
	}
	t.Skip("nginx is not installed: the replica tests need it (apt-get install nginx)")
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
	settings := map[string]any{"store": o.pg, "http": map[string]any{"allowedHosts": o.allowedHosts}, "jobs": o.jobs}
	for i := range 2 {
		e := mcpxtest.NewEnv(t)
		if i > 0 { // one state dir: one token file for both
			e.Vars["XDG_STATE_HOME"] = c.envs[0].Vars["XDG_STATE_HOME"]
		}
		c.envs = append(c.envs, e)
		cfg := e.WriteConfig(settings, mcpxtest.Demo{Name: "demo"})
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
	cmd := exec.Command(e.Bin, "serve", "--config", cfg, "--http", "127.0.0.1:0", "--log-level", "info")
	cmd.Env = e.Environ()
	cmd.WaitDelay = 5 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replicaProc{cmd: cmd, waited: make(chan error, 1)}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if testing.Verbose() {
				t.Log(name + ": " + line)
			}
			if u, ok := strings.CutPrefix(line, "mcpx: serving MCP at "); ok {
				urlc <- u
			}
		}
		r.waited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if r.killed {
			return
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.waited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-r.waited
			t.Errorf("%s did not exit within 20s of SIGTERM", name)
		}
	})
	select {
	case r.URL = <-urlc:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s printed no URL within 30s", name)
	}
	return r
}

// kill ends the replica with SIGKILL and waits for it.
func (r *replicaProc) kill(t *testing.T) {
	t.Helper()
	r.killed = true
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.waited:
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
		addr := strings.TrimSuffix(strings.TrimPrefix(r.URL, "http://"), "/mcp")
		fmt.Fprintf(&servers, "\t\tserver %s max_fails=1 fail_timeout=2s;\n", addr)
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, nginxConf, dir, port, servers.String(), balance), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", conf, "-g", "daemon off;")
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
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx output:\n%s\nerror.log:\n%s", out, log)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			conn.Close()
			return
		}
		select {
		case err := <-waited:
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx exited: %v\n%s\n%s", err, out, log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("nginx did not listen within 10s")
		}
	}
}

// host runs replicahost.mjs with spec (url and token filled in) and
// decodes its report into v.
func (c *cluster) host(t *testing.T, spec map[string]any, v any) {
	t.Helper()
	node, interop := mcpxtest.Node(t)
	spec["url"], spec["token"] = c.URL, c.Token
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

// postgresCtl runs scripts/postgres verb dir.
func postgresCtl(t *testing.T, verb, dir string) {
	t.Helper()
	script := filepath.Join(mcpxtest.ModuleRoot(), "scripts", "postgres")
	if out, err := exec.Command(script, verb, dir).CombinedOutput(); err != nil {
		t.Fatalf("scripts/postgres %s: %v: %s", verb, err, out)
	}
}
