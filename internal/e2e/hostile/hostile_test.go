package hostile

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/config"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// The hostile-client suite: what a hostile host or local user sends to
// each face that takes a connection (`mcpx serve --http`, the daemon's
// http.listen, the daemon's unix socket at /mcp, `mcpx serve` on stdio),
// each class with its defined answer, and the serving process's
// descriptors, goroutines and memory read from /proc (and the daemon's
// status) before and after: what the attack held must be given back.

// hostileNofile is the descriptor limit the served processes run under,
// so that the connection bounds (half of it, a quarter of that for
// connections not yet trusted) are small enough to reach.
const hostileNofile = 256

// hostileFace is one face under attack.
type hostileFace struct {
	name  string
	addr  string // host:port, or the socket's path
	unix  bool
	token string // "" where none is needed
	pid   int    // the process serving it
	// status reads the daemon's status; nil for `mcpx serve --http`, which
	// has none.
	status func() *apitype.Status
	logs   func() string
}

// url is the face's MCP endpoint as a client names it.
func (f *hostileFace) url() string {
	if f.unix {
		return "http://localhost/mcp"
	}
	return "http://" + f.addr + "/mcp"
}

// dial opens a raw connection to the face.
func (f *hostileFace) dial(t *testing.T) net.Conn {
	t.Helper()
	network := "tcp"
	if f.unix {
		network = "unix"
	}
	c, err := net.DialTimeout(network, f.addr, 10*time.Second)
	if err != nil {
		t.Fatalf("%s: dialing: %v", f.name, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// host is a raw HTTP host of the face with the token.
func (f *hostileFace) host(t *testing.T) *harness.RawHost {
	h := harness.NewRawHost(t, &harness.HTTPMCPX{URL: f.url(), Token: f.token, LogBuf: &harness.SyncBuffer{}})
	if f.unix {
		addr := f.addr
		tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", addr)
		}}
		t.Cleanup(tr.CloseIdleConnections)
		h.Hc = &http.Client{Transport: tr}
	}
	return h
}

// hostileFaces starts `mcpx serve --http` and a daemon with http.listen,
// each under hostileNofile, and returns their three HTTP faces.
func hostileFaces(t *testing.T, e *mcpxtest.Env) []*hostileFace {
	t.Helper()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) is needed to bound the served processes' descriptors")
	}
	limit := "--nofile=" + strconv.Itoa(hostileNofile) + ":" + strconv.Itoa(hostileNofile)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := e.WriteConfig(map[string]any{"http": map[string]any{"listen": addr}}, mcpxtest.Demo{Name: "demo"})
	tok, err := config.Token(filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "token"))
	if err != nil {
		t.Fatal(err)
	}

	// The daemon, started by a command run under the limit (it inherits it).
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prlimit, limit, e.Bin, "tools", "--config", cfg)
	cmd.Env = e.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mcpx tools (starting the daemon): %v\n%s", err, out)
	}
	status := func() *apitype.Status {
		out, stderr, code := e.Run(30*time.Second, "status", "--config", cfg, "--json")
		var st apitype.Status
		if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
			t.Fatalf("mcpx status --json: exit %d: %s %s", code, out, stderr)
		}
		return &st
	}
	st := status()
	daemonLogs := func() string {
		logs, _ := filepath.Glob(filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "daemon-*.log"))
		var b strings.Builder
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			b.Write(data)
		}
		return b.String()
	}
	faces := []*hostileFace{
		{name: "daemon-http", addr: addr, token: tok, pid: st.PID, status: status, logs: daemonLogs},
		{name: "daemon-socket", addr: st.Socket, unix: true, pid: st.PID, status: status, logs: daemonLogs},
	}

	// mcpx serve --http, a process of its own.
	serve := exec.Command(prlimit, limit, e.Bin, "serve", "--config", cfg, "--http", "127.0.0.1:0", "--log-level", "info")
	serve.Env = e.Environ()
	serve.WaitDelay = 5 * time.Second
	stderr, err := serve.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	logs := &harness.SyncBuffer{}
	urlc := make(chan string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			logs.Write([]byte(sc.Text() + "\n"))
			if u, ok := strings.CutPrefix(sc.Text(), "mcpx: serving MCP at "); ok {
				urlc <- u
			}
		}
	}()
	t.Cleanup(func() {
		serve.Process.Signal(syscall.SIGTERM)
		waited := make(chan error, 1)
		go func() { waited <- serve.Wait() }()
		select {
		case <-waited:
		case <-time.After(20 * time.Second):
			serve.Process.Kill()
			<-waited
			t.Errorf("mcpx serve --http did not exit within 20s of SIGTERM")
		}
		<-copied
	})
	select {
	case u := <-urlc:
		faces = append(faces, &hostileFace{name: "serve-http", addr: strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/mcp"),
			token: tok, pid: serve.Process.Pid, logs: logs.String})
	case <-time.After(30 * time.Second):
		t.Fatalf("mcpx serve --http printed no URL within 30s; stderr:\n%s", logs)
	}
	return faces
}

// usage is what a process holds.
type usage struct {
	fds, goroutines int // goroutines: -1 where the process reports none
	rssKiB          int
}

func (f *hostileFace) usage(t *testing.T) usage {
	t.Helper()
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(f.pid) + "/fd")
	if err != nil {
		t.Fatalf("%s: reading its descriptors: %v", f.name, err)
	}
	u := usage{fds: len(fds), goroutines: -1}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(f.pid) + "/status"); err == nil {
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				u.rssKiB, _ = strconv.Atoi(strings.Fields(v)[0])
			}
		}
	}
	if f.status != nil {
		u.goroutines = f.status().Goroutines
	}
	return u
}

// hostileSlack is what a process may hold after an attack beyond what it
// held before: the connections and goroutines of the clients still open
// (the status command's own, a host's keep-alive connection), never one
// per attacking connection.
const (
	hostileFDSlack        = 8
	hostileGoroutineSlack = 16
	hostileRSSSlackKiB    = 64 << 10
)

// settled waits until f holds no more than before (within the slack),
// and fails naming what it kept.
func (f *hostileFace) settled(t *testing.T, what string, before usage) {
	t.Helper()
	f.settledWithin(t, what, before, hostileRSSSlackKiB)
}

// settledWithin is settled with rssSlackKiB of memory in place of
// hostileRSSSlackKiB.
func (f *hostileFace) settledWithin(t *testing.T, what string, before usage, rssSlackKiB int) {
	t.Helper()
	deadline := time.Now().Add(harness.WaitLong)
	var now usage
	for {
		now = f.usage(t)
		ok := now.fds <= before.fds+hostileFDSlack && now.rssKiB <= before.rssKiB+rssSlackKiB &&
			(before.goroutines < 0 || now.goroutines <= before.goroutines+hostileGoroutineSlack)
		if ok {
			t.Logf("%s after %s: %d descriptors (%d before), %d goroutines (%d), RSS %d KiB (%d)",
				f.name, what, now.fds, before.fds, now.goroutines, before.goroutines, now.rssKiB, before.rssKiB)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after %s: %d descriptors (%d before), %d goroutines (%d), RSS %d KiB (%d): it kept what the attack took",
				f.name, what, now.fds, before.fds, now.goroutines, before.goroutines, now.rssKiB, before.rssKiB)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// closedWithin reports whether the peer closes c within d, reading what it
// sends first.
func closedWithin(c net.Conn, d time.Duration) (string, bool) {
	c.SetReadDeadline(time.Now().Add(d))
	b, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return string(b), false
	}
	return string(b), true
}
