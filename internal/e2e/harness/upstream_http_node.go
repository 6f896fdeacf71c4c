package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// HTTP upstreams from npm: @modelcontextprotocol/server-everything over
// Streamable HTTP (legacy, behind a recording reverse proxy), and a server
// built on the TypeScript SDK v2 (test/interop/v2server.mjs) as a
// 2026-07-28 upstream that reports what it saw on stdout.

// NodeProc is a node server the test started; it is stopped at cleanup.
type NodeProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// StartNodeServer runs node with args in the interop directory, with extra
// environment, and calls line for each line of stdout and stderr (from
// their reader goroutines) until the process exits. It is stopped (SIGTERM,
// then SIGKILL) at cleanup.
func StartNodeServer(t *testing.T, env []string, line func(stream, text string), args ...string) *NodeProc {
	t.Helper()
	node, interop := mcpxtest.Node(t)
	cmd := exec.Command(node, args...)
	cmd.Dir = interop
	cmd.Env = append(cmd.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe() // closed at cleanup: v2server.mjs exits on it
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &NodeProc{cmd: cmd, done: make(chan struct{})}
	var readers sync.WaitGroup
	for name, r := range map[string]io.Reader{"stdout": stdout, "stderr": stderr} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			sc := bufio.NewScanner(r)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				line(name, sc.Text())
			}
		}()
	}
	go func() {
		readers.Wait()
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// FreeLoopbackPort returns a loopback TCP port that was free a moment ago.
func FreeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// WireTap is a reverse proxy in front of an HTTP upstream that records
// every POST it forwards with the upstream's status.
type WireTap struct {
	Url string

	Mu    sync.Mutex
	Posts []*TappedExchange
}

type TappedExchange struct {
	Header http.Header
	Msg    *jsonrpc.Message
	Status int
}

func StartWireTap(t *testing.T, target string) *WireTap {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tap := &WireTap{}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.FlushInterval = -1 // event streams pass at once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg *jsonrpc.Message
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			msg, _ = jsonrpc.Decode(body)
		}
		rec := &StatusWriter{ResponseWriter: w}
		if msg == nil {
			proxy.ServeHTTP(rec, r)
			return
		}
		x := &TappedExchange{Header: r.Header.Clone(), Msg: msg}
		tap.Mu.Lock()
		tap.Posts = append(tap.Posts, x)
		tap.Mu.Unlock()
		proxy.ServeHTTP(rec, r)
		tap.Mu.Lock()
		x.Status = rec.status
		tap.Mu.Unlock()
	}))
	t.Cleanup(ts.Close)
	tap.Url = ts.URL + u.Path
	return tap
}

type StatusWriter struct {
	http.ResponseWriter
	status int
}

func (w *StatusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *StatusWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// Exchanges returns the recorded POSTs of a JSON-RPC method.
func (tap *WireTap) Exchanges(method string) []TappedExchange {
	tap.Mu.Lock()
	defer tap.Mu.Unlock()
	var out []TappedExchange
	for _, p := range tap.Posts {
		if p.Msg.Method == method {
			out = append(out, *p)
		}
	}
	return out
}

// WaitExchange waits for a recorded POST that satisfies match. Its Status
// is 0 until the upstream's whole answer went through.
func (tap *WireTap) WaitExchange(t *testing.T, what, method string, match func(TappedExchange) bool) TappedExchange {
	t.Helper()
	deadline := time.Now().Add(WaitLong)
	for {
		for _, p := range tap.Exchanges(method) {
			if match(p) {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s reached the upstream within %s", what, WaitLong)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// StartEverythingHTTP runs server-everything in streamableHttp mode on a
// free port and returns its MCP endpoint's URL.
func StartEverythingHTTP(t *testing.T) string {
	t.Helper()
	everything := mcpxtest.NodeModule(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	port := FreeLoopbackPort(t)
	ready := make(chan struct{})
	var once sync.Once
	StartNodeServer(t, []string{fmt.Sprintf("PORT=%d", port)}, func(stream, text string) {
		if strings.Contains(text, "listening on port") {
			once.Do(func() { close(ready) })
		}
	}, everything, "streamableHttp")
	select {
	case <-ready:
	case <-time.After(WaitLong):
		t.Fatal("server-everything did not start listening")
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// StartDemoHTTP runs `mcpx demo -http 127.0.0.1:0` with args, recording to
// files under a directory of the test's own (so that it can be started
// before the test's Env, and outlive the mcpx the Env stops), and returns
// its URL and record and wire log paths.
func StartDemoHTTP(t *testing.T, args ...string) (url, record, wire string) {
	t.Helper()
	dir := t.TempDir()
	record, wire = filepath.Join(dir, "record.jsonl"), filepath.Join(dir, "wire.log")
	cmd := exec.Command(mcpxtest.Binary(t), append([]string{"demo", "-http", "127.0.0.1:0", "-record", record, "-wire-log", wire}, args...)...)
	cmd.Env = append(cmd.Environ(), "GORACE="+mcpxtest.RaceQuickExit)
	cmd.Stderr = StderrToLog{t}
	stdin, stdout := StartPiped(t, cmd)
	done := make(chan struct{})
	urls := make(chan string, 1)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				urls <- u
			}
		}
		cmd.Wait()
	}()
	t.Cleanup(func() {
		stdin.Close() // the demo runs until its stdin ends
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("mcpx demo -http did not exit within 10s of its stdin closing")
		}
	})
	select {
	case url = <-urls:
	case <-done:
		t.Fatal("mcpx demo -http exited before listening")
	case <-time.After(WaitLong):
		t.Fatal("mcpx demo -http printed no address")
	}
	return url, record, wire
}

type StderrToLog struct{ t *testing.T }

func (w StderrToLog) Write(p []byte) (int, error) {
	w.t.Logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
